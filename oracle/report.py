"""The HTML conformance report: results.json (written by the pytest plugin) -> index.html.

``write_report(results_path, out_dir)`` renders ``out_dir/index.html`` with the Jinja2 template in
``oracle/templates/`` (autoescaping on: messages, events and scripts come from traces and are
escaped). The page is self-contained (inline CSS and JS, no network) and printable. Besides
results.json it reads, when present, ``out_dir/benchmarks.json`` (performance section) and
``out_dir/history/*.json`` (trend section); it appends the current run's summary to that history.
Values the fixed tolerance rejected and the error-aware judgement accepted (``oracle.tolerance``)
are counted in the summary and per rule, each rule's first examples shown with their numbers and
repro, so that no widened judgement passes unseen.

For an engine's author the page answers three questions: what differs (divergences counted by
class, ``oracle.compare.CLASSES``, in total and per family; per failing test every divergence of
its program, the first with both sides and a repro; in triage, the test's other failing programs
with theirs), what is missing (the capability probe's names by area, and per family the names the
programs needed), and how far to trust the run (backend and reference as loaded, isolation,
ignored classes, the triage caps, and a banner when the run was incomplete or tests cut short).

Run as ``python -m oracle.report [--results reports/results.json] [--out reports]``.
"""

from __future__ import annotations

import argparse
import io
import json
import keyword
import math
import re
import tokenize
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from oracle.compare import CLASSES
from oracle.results import PROGRAM_OUTCOMES, STATUS_ORDER, UNCHECKED, UNSUPPORTED

TEMPLATES = Path(__file__).parent / "templates"
STATUSES = (*STATUS_ORDER, UNCHECKED)
ISOLATION = {"process": "the backend in a worker process of its own",
             "none": "the backend in the suite's process (--isolation none)"}
REPRO_MARKER = "Repro (torch script):"
SCRIPT_KEYS = ("repro", "script", "torch_script", "rendered")
HIGHLIGHTED_NAMES = ("print", "torch")
TRACE_KEYS = (
    ("ref_trace", "reference (torch) trace"),
    ("test_trace", "backend trace"),
    ("reference_run", "reference (torch) run"),  # oracle.script: a whole script's output
    ("test_run", "backend run"),
)


def write_report(results_path: Path, out_dir: Path) -> Path:
    """Render ``out_dir/index.html`` from results.json; returns the path of the page."""
    results = json.loads(Path(results_path).read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    history = append_history(out_dir / "history", run_summary(results))
    page = _environment().get_template("report.html.j2").render(
        r=results,
        statuses=STATUSES,
        run=_run_view(results),
        classes=_class_table(results),
        capabilities=_capability_view(results),
        families=[_family_view(family) for family in results.get("families", [])],
        rules=[_rule_view(rule) for rule in results.get("rules", [])],
        divergences=[_divergence_view(i, d) for i, d in enumerate(results.get("divergences", []))],
        known=[t for t in results.get("tests", []) if t.get("known_divergence")],
        benchmarks=_benchmarks(out_dir / "benchmarks.json"),
        trend=_trend(history),
        coverage=coverage_view(results),
    )
    path = out_dir / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["highlight"] = highlight_python
    env.filters["pretty"] = lambda value: json.dumps(value, indent=1, default=str)
    env.filters["source_label"] = source_label
    env.filters["counts"] = counts_text
    env.globals["measured"] = measured
    env.globals["CLASSES"] = CLASSES
    return env


def source_label(source: str) -> str:
    """A short name for a rule's source: a docs URL by its page (and anchor), so the rule table
    keeps its width for the sentences; anything else as it is."""
    if not source.startswith(("http://", "https://")):
        return source
    path, _, anchor = source.partition("#")
    page = path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".html")
    return f"{page}#{anchor}" if anchor else page


# --------------------------------------------------------------------------- argument coverage


def coverage_view(results: dict) -> dict:
    """The argument coverage (``oracle.coverage``) as the page shows it: the totals, per family
    with targets its counts, per rule with targets its counts, uncovered and excluded items
    (results from before coverage was measured: none)."""
    rules = [{"id": rule["id"], "family": rule.get("family"), **rule["coverage"]}
             for rule in results.get("rules", []) if rule.get("coverage")]
    families = [{"family": family["family"], **family["coverage"]}
                for family in results.get("families", []) if (family.get("coverage") or {}).get("targets")]
    totals = (results.get("totals") or {}).get("coverage") or {}
    empty = {"targets": 0, "covered": 0, "uncovered": 0, "rules": 0, "rules_uncovered": []}
    return {"totals": {**empty, **totals},
            "families": families, "rules": rules}


# --------------------------------------------------------------------------- summary & history


def run_summary(results: dict) -> dict:
    """One run in a line of history: when, what, and how many rules passed."""
    totals = results.get("totals", {})
    rule_status = totals.get("rule_status", {})
    rules = totals.get("rules", 0)
    return {
        "date": results.get("date"),
        "backend": results.get("backend", {}).get("name"),
        "version": results.get("backend", {}).get("version"),
        "device": results.get("device"),
        "profile": results.get("hypothesis_profile"),
        "rules": rules,
        "rule_status": rule_status,
        "tests": totals.get("tests", 0),
        "programs": totals.get("programs", 0),
        "pass_rate": rule_status.get("passed", 0) / rules if rules else 0.0,
    }


def append_history(history_dir: Path, summary: dict) -> list[dict]:
    """Store ``summary`` in ``history_dir`` (one file per run; the same run twice is one entry)
    and return all runs there, oldest first."""
    history_dir.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{summary['date']}_{summary['backend']}_{summary['device']}")
    (history_dir / f"{stem}.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    runs = []
    for path in history_dir.glob("*.json"):
        try:
            runs.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # a damaged history file must not cost the whole report
    return sorted(runs, key=lambda run: str(run.get("date")))


def _trend(history: list[dict]) -> dict | None:
    """Pass rate over time as SVG polyline points (0..100 on both axes), when there are 2+ runs."""
    if len(history) < 2:
        return None
    step = 100 / (len(history) - 1)
    points = [(round(i * step, 2), round(100 - 100 * float(run.get("pass_rate", 0)), 2))
              for i, run in enumerate(history)]
    return {"runs": history, "points": " ".join(f"{x},{y}" for x, y in points), "dots": points}


# --------------------------------------------------------------------------- views for the template


def counts_text(counts: dict[str, int] | None) -> str:
    """``{"gradient": 3, "value": 1}`` as "gradient 3, value 1" (zeros left out)."""
    return ", ".join(f"{key} {n}" for key, n in (counts or {}).items() if n)


def _run_view(results: dict) -> dict:
    """What the header says of the run beyond plain fields: the reference's pin (and whether this
    run accepted another version), the isolation, the triage caps and the warning banners."""
    reference = results.get("reference") or {}
    pinned, accepted = reference.get("pinned"), reference.get("accepted")
    triage = results.get("triage")
    cut_short = [t for t in results.get("tests", []) if t.get("cut_short")]
    return {
        "other_reference": accepted if accepted and pinned and accepted != pinned else None,
        "isolation": ISOLATION.get(results.get("isolation"), results.get("isolation")),
        "triage": triage if isinstance(triage, dict) else None,
        "incomplete": results.get("incomplete"),
        "cut_short": (results.get("totals") or {}).get("cut_short", len(cut_short)),
        "cut_short_tests": [(t.get("nodeid"), t.get("cut_short")) for t in cut_short],
    }


def _class_table(results: dict) -> dict:
    """Divergences by class: one row per class of ``CLASSES`` (its description, the run's count,
    the count ignored, and the count of each family that has divergences)."""
    totals = results.get("totals") or {}
    counted, ignored = totals.get("classes") or {}, totals.get("ignored") or {}
    families = [f for f in results.get("families", []) if any((f.get("classes") or {}).values())]
    ignore = set(results.get("ignore") or [])
    rows = [{"kind": kind, "description": description, "total": counted.get(kind, 0),
             "ignored": ignored.get(kind, 0), "ignored_by_option": kind in ignore,
             "families": [(f.get("classes") or {}).get(kind, 0) for f in families]}
            for kind, description in CLASSES.items()]
    return {"families": [f["family"] for f in families], "rows": rows,
            "total": sum(row["total"] for row in rows), "ignored": sum(row["ignored"] for row in rows)}


def _capability_view(results: dict) -> dict:
    """What the backend lacks: the probe's missing names by area, the owners it could not look
    names up on, a device it refused; per family the names programs needed (most needed first);
    the tests that were unsupported, with their reasons."""
    capabilities = results.get("capabilities") or {}
    probe = capabilities.get("probe") if isinstance(capabilities.get("probe"), dict) else None
    families = [{"family": f.get("family"), "lacks": sorted(f["lacks"].items(), key=lambda item: -item[1])}
                for f in capabilities.get("families") or [] if f.get("lacks")]
    missing = list(((probe or {}).get("missing") or {}).items())
    return {
        "probe": probe,
        "missing": missing,
        "missing_count": sum(len(names) for _, names in missing),
        "unknown": list(((probe or {}).get("unknown") or {}).items()),
        "device_error": (probe or {}).get("device_error"),
        "families": families,
        "unsupported": [{"nodeid": t.get("nodeid"), "rule": t.get("rule"),
                         "reason": str(t.get("reason", "")).removeprefix(UNSUPPORTED)}
                        for t in results.get("tests", []) if t.get("outcome") == "unsupported"],
    }


def _family_view(family: dict) -> dict:
    """A family with its rule-status bar segments (percent widths)."""
    counts = family.get("rules", {})
    total = sum(counts.values())
    segments = [(status, counts.get(status, 0), 100 * counts.get(status, 0) / total if total else 0)
                for status in STATUSES if counts.get(status, 0)]
    return {**family, "total_rules": total, "segments": segments}


def _rule_view(rule: dict) -> dict:
    """A rule with its count of values accepted by the error-aware judgement and the examples
    results.json kept of them (none in results from before they were recorded)."""
    examples = rule.get("error_aware_examples") or []
    outcomes = rule.get("program_outcomes") or {}
    return {**rule, "error_aware_accepted": rule.get("error_aware_accepted", 0),
            "error_aware": [_acceptance_view(e) for e in examples if isinstance(e, dict)],
            "outcomes": [(name, outcomes[name]) for name in PROGRAM_OUTCOMES if outcomes.get(name)],
            "classes": rule.get("classes") or {}, "ignored": rule.get("ignored") or {},
            "lacks": rule.get("lacks") or {}, "cut_short": rule.get("cut_short") or 0}


def _acceptance_view(example: dict) -> dict:
    """One accepted value as a reader checks it: where, the backend's and torch's values, torch's
    values in its reruns (float64, nudged inputs), and ``|backend - torch|`` within the allowance."""
    test, ref = example.get("test"), example.get("ref")
    where = f"event {example.get('index')} (step {example.get('step')}, {example.get('kind')})"
    return {
        "nodeid": example.get("nodeid"),
        "where": where,
        "name": example.get("name"),
        "value": example.get("value"),
        "dtype": example.get("dtype"),
        "test": _number(test, ".9g"),
        "ref": _number(ref, ".9g"),
        "ref64": _number(example.get("ref64"), ""),  # shortest exact float64
        "nudged": None if example.get("nudged") is None else _number(example.get("nudged"), ".9g"),
        "difference": _number(abs(test - ref), ".3g") if _is_number(test) and _is_number(ref) else "—",
        "allowance": _number(example.get("allowance"), ".3g"),
        "repro": example.get("repro"),
    }


def _number(value: Any, spec: str) -> str:
    """A number as the report prints it; anything else (a trace's "nan", a missing value) as text."""
    return format(value, spec) if _is_number(value) else str(value)


def _divergence_view(index: int, entry: dict) -> dict:
    """What the page shows of one failure: the first divergent event of each side, the repro
    script, the traces; tolerant of failures that carry no structured divergence."""
    details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
    first = details.get("divergence") if isinstance(details.get("divergence"), dict) else details
    message = entry.get("message", "")
    script = next((details[k] for k in SCRIPT_KEYS if isinstance(details.get(k), str)), None)
    if REPRO_MARKER in message:
        message, _, from_message = message.partition(REPRO_MARKER)
        script = script or from_message.strip("\n")
    ref_event, test_event = first.get("ref_event"), first.get("test_event")
    shown = {"divergence", "description", "divergences", "classes", "other_programs", *first.keys(),
             *SCRIPT_KEYS, *dict(TRACE_KEYS)}
    others = details.get("other_programs") if isinstance(details.get("other_programs"), list) else []
    return {
        "id": f"div-{index}",
        "all": _divergence_rows(details.get("divergences"), first),
        "classes": details.get("classes") or {},
        "others": [{"description": other.get("description"), "classes": other.get("classes") or {},
                    "all": _divergence_rows(other.get("divergences"), None), "repro": other.get("repro")}
                   for other in others if isinstance(other, dict)],
        "nodeid": entry.get("nodeid"),
        "rule": entry.get("rule"),
        "phase": entry.get("phase"),
        "message": message.strip(),
        "reason": first.get("reason"),
        "index": first.get("index"),
        "event_rows": _event_rows(ref_event, test_event) if (ref_event or test_event) else [],
        "script": script,
        "traces": [(label, _trace_lines(details[key])) for key, label in TRACE_KEYS if key in details],
        "extra": {k: v for k, v in details.items() if k not in shown},
    }


def _divergence_rows(found: Any, first: dict | None) -> list[dict]:
    """Every divergence of a program (``DivergenceError.to_dict()``'s summaries), the one shown
    in full (``first``: the same index, class and reason) marked."""
    if not isinstance(found, list):
        return []
    mark = None if not first else (first.get("index"), first.get("kind"), first.get("reason"))
    rows = []
    for entry in found:
        if isinstance(entry, dict):
            key = (entry.get("index"), entry.get("kind"), entry.get("reason"))
            rows.append({**entry, "follows": entry.get("follows"), "first": mark is not None and key == mark})
    return rows


def _event_rows(ref: Any, test: Any) -> list[tuple[str, str, str, bool]]:
    """Side-by-side rows (field, reference value, backend value, differs) of two trace events."""
    if not isinstance(ref, dict) or not isinstance(test, dict):
        return [("event", _compact(ref), _compact(test), ref != test)]
    ref, test = _flatten(ref), _flatten(test)
    rows = []
    for key in dict.fromkeys([*ref, *test]):
        left, right = ref.get(key, "—"), test.get(key, "—")
        rows.append((key, _compact(left), _compact(right), left != right))
    return rows


def _flatten(event: dict, prefix: str = "") -> dict:
    """Nested fields as dotted keys (``value.is_leaf``), so the differing one stands out."""
    flat: dict[str, Any] = {}
    for key, value in event.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _trace_lines(trace: Any) -> str:
    """A trace, one event per line (traces are lists of events, possibly wrapped or as JSON), or
    a script run, one channel after the other."""
    if isinstance(trace, str):
        try:
            trace = json.loads(trace)
        except ValueError:
            return trace
    events = trace.get("events") if isinstance(trace, dict) else trace
    if isinstance(events, list):
        return "\n".join(f"{i:>3}  {_compact(event)}" for i, event in enumerate(events))
    if isinstance(trace, dict):  # a script run: channels of text (stdout, stderr) and short fields
        return "\n".join(
            f"--- {key} ---\n{value.rstrip()}" if isinstance(value, str) and "\n" in value.strip()
            else f"{key}: {_compact(value)}"
            for key, value in trace.items()
        )
    return json.dumps(trace, indent=1, default=str)


def _benchmarks(path: Path) -> dict | None:
    """The performance section from benchmarks.json (``benchmarks/results.py`` writes it: a dict
    with ``machine``, ``date`` and ``results`` rows; a bare list of rows is read too): the rows of
    each device apart, each with its impl/torch ratio as a bar, and the scaling curves."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    meta = data if isinstance(data, dict) else {}
    raw = data if isinstance(data, list) else meta.get("results") or meta.get("benchmarks") or []
    rows = [_benchmark_row(row) for row in raw if isinstance(row, dict)]
    devices = list(dict.fromkeys(row["device"] for row in rows))
    groups = []
    for device in devices:
        mine = [row for row in rows if row["device"] == device]
        groups.append({"device": device, "rows": _with_ratio_bars(mine), "curves": _scaling_curves(mine)})
    return {"machine": meta.get("machine"), "date": meta.get("date"), "torch": meta.get("torch"),
            "groups": groups}


def _benchmark_row(row: dict) -> dict:
    """One workload: impl and torch values with their unit, the ratio (kept as None where the
    benchmark says the ratio means nothing), peers, and the size parameter ``n`` if any."""
    impl, torch = row.get("impl"), row.get("torch")
    ratio = row.get("ratio") if "ratio" in row else (
        impl / torch if _is_number(impl) and _is_number(torch) and torch > 0 else None)
    params = row.get("params") if isinstance(row.get("params"), dict) else {}
    return {"name": str(row.get("name", "?")), "device": str(row.get("device") or "unspecified"),
            "unit": str(row.get("unit", "s")), "impl": impl, "torch": torch,
            "ratio": ratio if _is_number(ratio) else None,
            "peers": row.get("peers") if isinstance(row.get("peers"), dict) else {},
            "workload": params.get("workload"), "n": params.get("n")}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _with_ratio_bars(rows: list[dict]) -> list[dict]:
    """Each row with ``bar`` = (side, percent): impl/torch on a log scale around 1x, the longest
    ratio of the device filling half the cell (to the right: impl slower; left: faster)."""
    logs = [abs(math.log10(row["ratio"])) for row in rows if row["ratio"] and row["ratio"] > 0]
    scale = max([1.0, *logs])  # at least a decade, so 1.1x does not look like 100x
    for row in rows:
        ratio = row["ratio"]
        row["bar"] = None if not ratio or ratio <= 0 else (
            "slower" if ratio >= 1 else "faster", round(50 * abs(math.log10(ratio)) / scale, 2))
    return rows


CURVE_BOX = (600, 260, 70, 50, 12, 36)  # width, height, left, right, top, bottom margins (SVG units)
ENGINE_COLOURS = {"impl": "#0b57d0", "torch": "#ef6c00"}
PEER_COLOURS = ("#6a1b9a", "#2e7d32", "#78909c")


def _scaling_curves(rows: list[dict]) -> list[dict]:
    """Time against graph size ``n`` (log-log), one chart per workload measured at 2+ sizes,
    one polyline per engine, as SVG coordinates and axis ticks."""
    by_workload: dict[str, list[dict]] = {}
    for row in rows:
        if row["unit"] == "s" and _is_number(row["n"]) and row["n"] > 0 and row["workload"]:
            by_workload.setdefault(str(row["workload"]), []).append(row)
    charts = []
    for workload, measured in by_workload.items():
        measured.sort(key=lambda row: row["n"])
        if len({row["n"] for row in measured}) < 2:
            continue
        engines = list(dict.fromkeys(["impl", "torch", *(e for row in measured for e in row["peers"])]))
        series = {engine: [(row["n"], _engine_value(row, engine)) for row in measured] for engine in engines}
        series = {e: [(n, t) for n, t in points if _is_number(t) and t > 0] for e, points in series.items()}
        series = {e: points for e, points in series.items() if points}
        if series:
            charts.append(_log_log_chart(workload, series))
    return charts


def _engine_value(row: dict, engine: str) -> Any:
    return row[engine] if engine in ("impl", "torch") else row["peers"].get(engine)


def _log_log_chart(workload: str, series: dict[str, list[tuple[float, float]]]) -> dict:
    width, height, left, right, top, bottom = CURVE_BOX
    sizes = sorted({n for points in series.values() for n, _ in points})
    times = [t for points in series.values() for _, t in points]
    x_lo, x_hi = math.log10(sizes[0]), math.log10(sizes[-1])
    y_lo, y_hi = math.floor(math.log10(min(times))), math.ceil(math.log10(max(times)))
    y_hi = max(y_hi, y_lo + 1)

    def x(n: float) -> float:
        return round(left + (width - left - right) * (math.log10(n) - x_lo) / ((x_hi - x_lo) or 1), 1)

    def y(t: float) -> float:
        return round(top + (height - top - bottom) * (y_hi - math.log10(t)) / (y_hi - y_lo), 1)

    peers = iter(PEER_COLOURS * len(series))
    lines = [{"engine": engine, "colour": ENGINE_COLOURS.get(engine) or next(peers),
              "points": " ".join(f"{x(n)},{y(t)}" for n, t in points),
              "dots": [(x(n), y(t), f"{engine}, n={n:g}: {_seconds(t)}") for n, t in points]}
             for engine, points in series.items()]
    return {"workload": workload, "box": CURVE_BOX, "lines": lines,
            "x_ticks": [(x(n), f"{n:,g}") for n in sizes],
            "y_ticks": [(y(10.0 ** k), _seconds(10.0 ** k)) for k in range(y_lo, y_hi + 1)]}


def _seconds(value: float) -> str:
    """A time in seconds as people read it: 12.3 µs, 4.56 ms, 1.2 s."""
    for factor, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


def measured(value: Any, unit: str) -> str:
    """A benchmark value with its unit (times scaled to s/ms/µs); a dash when missing."""
    if not _is_number(value):
        return "—"
    return _seconds(value) if unit == "s" else f"{value:.4g} {unit}"


# --------------------------------------------------------------------------- syntax highlighting


def highlight_python(source: str | None) -> Markup:
    """Escaped Python source with keywords, strings, numbers and comments wrapped in spans."""
    if not source:
        return Markup("")
    offsets = [0]
    for line in io.StringIO(source):  # the same lines tokenize reads
        offsets.append(offsets[-1] + len(line))
    pieces, position = [], 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            css = _token_class(token)
            if css is None:
                continue
            start = offsets[token.start[0] - 1] + token.start[1]
            end = offsets[token.end[0] - 1] + token.end[1]
            pieces.append(escape(source[position:start]))
            pieces.append(Markup('<span class="{}">{}</span>').format(css, source[start:end]))
            position = end
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # highlight what tokenized; the rest is shown plain
    pieces.append(escape(source[position:]))
    return Markup("").join(pieces)


def _token_class(token: tokenize.TokenInfo) -> str | None:
    if token.type == tokenize.NAME and (keyword.iskeyword(token.string) or token.string in HIGHLIGHTED_NAMES):
        return "kw"
    return {tokenize.STRING: "str", tokenize.NUMBER: "num", tokenize.COMMENT: "com"}.get(token.type)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m oracle.report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("reports/results.json"))
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: beside --results)")
    args = parser.parse_args(argv)
    print(write_report(args.results, args.out or args.results.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
