"""The Engines page: every engine and torch version run (``reports/engines/NAME/results.json``)
side by side, and the README's "Engines" table generated from the same summaries.

Per run: the backend and its version, the reference, date, device and profile; tests passed /
failed / unsupported per family; the names the backend lacks; the top divergences (one per failing
test, with its repro) and, where one was checked by hand, its one-line account from
``oracle/adapters/findings.json``. ``python -m oracle engines`` writes
``reports/engines/index.html`` (and, with ``--readme``, the table between the README's markers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from oracle.results import STATUS_ORDER

FINDINGS = Path(__file__).parent / "adapters" / "findings.json"
README_START, README_END = "<!-- engines:start -->", "<!-- engines:end -->"
TOP = 8  # divergences shown per run
PAGE_STATUSES = ("passed", "failed", "unsupported", "xfailed", "xpassed", "skipped")
REPRO = "Repro (torch script):"


def summarize(name: str, results: dict, findings: list[dict]) -> dict:
    """What the page and the README show of one run."""
    totals = results.get("totals", {})
    probe = (results.get("capabilities") or {}).get("probe") or {}
    lacks: dict[str, int] = {}
    for family in results.get("families", []):
        for lacked, count in family.get("lacks", {}).items():
            lacks[lacked] = lacks.get(lacked, 0) + count
    checked = {finding["test"]: finding for finding in findings if _concerns(finding, name, results)}
    return {
        "name": name,
        "backend": results["backend"],
        "reference": results["reference"].get("version"),
        "date": results.get("date", "")[:10],
        "device": results.get("device"),
        "ignore": results.get("ignore") or [],
        "profile": results.get("hypothesis_profile"),
        "corpus": results.get("corpus"),
        "totals": {status: totals.get(status, 0) for status in ("tests", *STATUS_ORDER)},
        "programs": totals.get("program_outcomes", {}),
        "classes": {k: v for k, v in totals.get("classes", {}).items() if v},
        "cut_short": totals.get("cut_short", 0),
        "families": [{"family": f["family"], **f["tests"]} for f in results.get("families", [])
                     if sum(f["tests"].values())],
        "missing": {area: names for area, names in (probe.get("missing") or {}).items() if names},
        "lacks": sorted(lacks.items(), key=lambda item: (-item[1], item[0])),
        "divergences": top_divergences(results.get("divergences", []), checked),
        "checked": list(checked.values()),
    }


def _concerns(finding: dict, name: str, results: dict) -> bool:
    """Whether a finding belongs to the run ``name``: its engine's (``torch-2.5.1`` also for
    ``torch-2.5.1-behaviour``), and of a class the run counts."""
    ignored = {kind.rstrip("s") for kind in results.get("ignore") or []}
    engine = finding["engine"]
    return (name == engine or name.startswith(f"{engine}-")) and finding.get("class") not in ignored


def top_divergences(divergences: list[dict], checked: dict[str, dict]) -> list[dict]:
    """The ``TOP`` most frequent kinds of divergence (the failing tests' first divergences, alike
    but for where they happened), each with the tests showing it and its first one's repro; a
    kind with a divergence checked by hand comes first."""
    kinds: dict[str, dict] = {}
    for divergence in divergences:
        entry = _divergence(divergence, checked.get(divergence["nodeid"]))
        kind = kinds.setdefault(entry["kind"], {**entry, "tests": []})
        kind["tests"].append(divergence["nodeid"])
        kind["finding"] = kind["finding"] or entry["finding"]
    ranked = sorted(kinds.values(), key=lambda kind: (kind["finding"] is None, -len(kind["tests"])))
    return ranked[:TOP]


def _divergence(divergence: dict, finding: dict | None) -> dict:
    message = divergence.get("message", "")
    head, _, repro = message.partition(REPRO)
    first = head.strip().splitlines()[0] if head.strip() else ""
    first = re.sub(r"^[\w.]+(Error|Mismatch): ", "", first)
    kind = re.sub(r"at event \d+ \(step \d+, |\b[txgh]\d+\b|\d+(\.\d+)?", "#", first)[:160]
    return {"nodeid": divergence["nodeid"], "rule": divergence.get("rule"), "first": first, "kind": kind,
            "account": head.strip(), "repro": repro.strip(), "finding": finding}


def collect(reports: Path, findings_path: Path = FINDINGS) -> list[dict]:
    """The summaries of every run under ``reports`` (one directory per engine or version)."""
    findings = json.loads(findings_path.read_text(encoding="utf-8")) if findings_path.exists() else []
    runs = []
    for path in sorted(reports.glob("*/results.json")):
        runs.append(summarize(path.parent.name, json.loads(path.read_text(encoding="utf-8")), findings))
    return runs


def write_page(runs: list[dict], out: Path) -> Path:
    """Render the Engines page to ``out/index.html``."""
    from oracle.report import _environment

    out.mkdir(parents=True, exist_ok=True)
    page = out / "index.html"
    page.write_text(_environment().get_template("engines.html.j2").render(runs=runs, statuses=PAGE_STATUSES),
                    encoding="utf-8")
    return page


def readme_table(runs: list[dict]) -> str:
    """The README's Engines table (markdown): per run what passes, fails and is lacked."""
    lines = ["| engine (version) | vs torch | date | tests passed / failed / unsupported | programs passed / "
             "failed / unsupported | lacks (programs needing it) |", "| --- | --- | --- | --- | --- | --- |"]
    for run in runs:
        t, p = run["totals"], run["programs"]
        lacks = ", ".join(f"`{name}` ({count})" for name, count in run["lacks"][:6]) or "nothing"
        ignored = f", not counting {' and '.join(run['ignore'])}" if run["ignore"] else ""
        skipped = f" ({t['skipped']} skipped)" if t["skipped"] else ""
        programs = " / ".join(str(p.get(status, 0)) for status in ("passed", "failed", "unsupported"))
        lines.append(
            f"| {run['name']} {run['backend']['version']}{ignored} | {run['reference']} | {run['date']} | "
            f"{t['passed']} / {t['failed']} / {t['unsupported']}{skipped} | {programs} | {lacks} |"
        )
    findings = {(f["engine"], f["test"]): f for run in runs for f in run["checked"]}  # once each
    checked = [f"- **{f['engine']}**, `{f['test'].split('::')[-1]}`: {f['line']}" for f in findings.values()]
    return "\n".join([*lines, "", *(["Checked by hand (a few lines on both sides reproduce each):", *checked]
                                    if checked else [])])


def update_readme(readme: Path, table: str) -> None:
    """Replace what stands between the README's engines markers with ``table``."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    readme.write_text(f"{text[:start]}\n{table}\n{text[end:]}", encoding="utf-8")
