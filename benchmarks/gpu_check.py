"""benchmarks/gpu_check.sh's Python side: the machine's facts before the parts run, and the summary
after them (``python -m benchmarks.gpu_check facts|summary ...``). Only the standard library at the
top: torch and cupy are imported inside ``facts``, which the script runs under a timeout.

``facts FILE``: the device (torch's and nvidia-smi's names), the driver, the torch, CUDA, cupy,
numpy and Python versions, the CPU count, as JSON.

``summary STAGE OUT``: reads what the parts left in ``STAGE`` (``parts.jsonl``: each part's exit
status and time; the device tests' JUnit XML; the conformance run's results.json; the benchmarks'
benchmarks.json) and writes ``OUT/summary.json`` and ``OUT/summary.txt``, the table it prints.
Its exit status is 0 when every part ran (finished within its time limit with pytest's status 0,
tests passed, or 1, some failed, and left its results: facts, a JUnit report with tests, a
results.json, benchmark rows on 'cuda'), else 1.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

RAN = (0, 1)  # pytest's exit statuses of a session that ran: all passed, some failed
TIMED_OUT = 124  # the exit status of timeout(1) when the limit was reached


def facts() -> dict[str, Any]:
    """What machine and software the parts run on (each item None where it cannot be read)."""
    found: dict[str, Any] = {
        "mode": "standin" if os.environ.get("ORACLE_GPU_STANDIN") == "1" else "gpu",
        "python": platform.python_version(), "cpus": os.cpu_count(), "host": platform.node(),
    }
    try:
        import numpy

        found["numpy"] = numpy.__version__
    except ImportError as exc:
        found["numpy_error"] = str(exc)
    try:
        import torch

        found.update(torch=torch.__version__, torch_release=torch.__version__.split("+")[0],
                     torch_cuda=torch.version.cuda, torch_cuda_available=torch.cuda.is_available())
        if torch.cuda.is_available():
            found["device"] = torch.cuda.get_device_name(0)
            found["capability"] = ".".join(map(str, torch.cuda.get_device_capability(0)))
    except Exception as exc:  # noqa: BLE001 - a broken torch is a fact to report
        found["torch_error"] = f"{type(exc).__name__}: {exc}"
    try:
        import cupy

        standin = getattr(cupy, "__file__", "").endswith("cupy_standin.py")
        found["cupy"] = ("stand-in (tests/helpers/cupy_standin.py)" if standin
                         else getattr(cupy, "__version__", None))
        found["cupy_devices"] = cupy.cuda.runtime.getDeviceCount()
        if not standin:
            found["cuda_runtime"] = _cuda_version(cupy.cuda.runtime.runtimeGetVersion())
            found["cuda_driver_api"] = _cuda_version(cupy.cuda.runtime.driverGetVersion())
    except Exception as exc:  # noqa: BLE001 - no cupy, or no device: reported, the parts say the rest
        found["cupy_error"] = f"{type(exc).__name__}: {exc}"
    found.update(_nvidia_smi())
    if found["mode"] == "standin":
        found.setdefault("device", "none: cupy stand-in on the CPU, torch on cpu as the reference")
    return found


def _cuda_version(number: int) -> str:
    return f"{number // 1000}.{number % 1000 // 10}"


def _nvidia_smi() -> dict[str, Any]:
    if shutil.which("nvidia-smi") is None:
        return {}
    query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]
    try:
        answer = subprocess.run(query, capture_output=True, text=True, timeout=20).stdout
        line = answer.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return {}
    name, driver, memory = (field.strip() for field in (line.split(",") + ["", "", ""])[:3])
    return {"smi_device": name, "driver": driver, "memory": memory}


# --------------------------------------------------------------------------- the summary


def parts(stage: Path) -> list[dict[str, Any]]:
    """Each part's record (``parts.jsonl``), with its status: passed, failed (tests failed),
    timeout, or error (any other exit status)."""
    records = []
    path = stage / "parts.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        record = json.loads(line)
        rc = record["rc"]
        record["status"] = ("passed" if rc == 0 else "failed" if rc == 1 else "timeout" if rc == TIMED_OUT
                            else f"error (exit status {rc})")
        record["ran"] = rc in RAN
        records.append(record)
    return records


def junit_counts(path: Path) -> dict[str, int] | None:
    """tests, failures, errors and skipped of a pytest JUnit XML file (None if there is none)."""
    if not path.exists():
        return None
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    keys = ("tests", "failures", "errors", "skipped")
    return {key: sum(int(suite.get(key, 0)) for suite in suites) for key in keys}


def conformance(path: Path) -> dict[str, Any] | None:
    """What the conformance run's results.json says, in short."""
    if not path.exists():
        return None
    results = json.loads(path.read_text())
    totals = results["totals"]
    failing = [t["nodeid"] for t in results["tests"] if t["outcome"] == "failed"]
    return {
        "reference": results.get("reference", {}),
        "device": results.get("device"),
        "hypothesis_profile": results.get("hypothesis_profile"),
        "tests": {key: totals.get(key, 0) for key in ("tests", "passed", "failed", "skipped", "xfailed",
                                                      "xpassed", "unsupported")},
        "programs": totals.get("programs"),
        "classes": {k: v for k, v in totals.get("classes", {}).items() if v},
        "version_only": totals.get("version_only", {}),
        "incomplete": results.get("incomplete"),
        "failing": failing,
    }


def bench_rows(path: Path) -> list[dict[str, Any]] | None:
    """The benchmark rows measured on 'cuda': workload, impl and torch medians, impl/torch."""
    if not path.exists():
        return None
    document = json.loads(path.read_text())
    rows = [row for row in document.get("results", []) if row.get("device") == "cuda"]
    return [{key: row.get(key) for key in ("name", "impl", "torch", "ratio", "unit")} for row in rows]


def summarize(stage: Path, found: dict[str, Any]) -> dict[str, Any]:
    ran = parts(stage)
    summary = {
        "facts": found,
        "parts": ran,
        "device_tests": junit_counts(stage / "device.xml"),
        "conformance": conformance(stage / "results.json"),
        "bench": bench_rows(stage / "benchmarks.json"),
    }
    products = {"facts": bool(found), "device tests": bool(summary["device_tests"]),
                "conformance": summary["conformance"] is not None, "bench_gpu": bool(summary["bench"])}
    for part in ran:  # a part ran when pytest ran and left what it is run for
        if part["ran"] and not products.get(part["part"], True):
            part["ran"], part["status"] = False, f"{part['status']}, no results"
    summary["every_part_ran"] = {p["part"] for p in ran if p["ran"]} >= set(products)
    return summary


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


def table(summary: dict[str, Any]) -> str:
    """The summary as text: machine, versions, each part's status and time, the benchmark ratios."""
    f = summary["facts"]
    conf = summary["conformance"] or {}
    ref = conf.get("reference", {})
    device = f.get("device") or f.get("smi_device") or "unknown"
    lines = [
        f"gpu_check ({f.get('mode')} mode)",
        f"device   {device}" + (f", {f['memory']}" if f.get("memory") else "")
        + (f", compute capability {f['capability']}" if f.get("capability") else ""),
        f"driver   {f.get('driver') or '-'} (CUDA driver API {f.get('cuda_driver_api') or '-'}, "
        f"cupy's CUDA runtime {f.get('cuda_runtime') or '-'})",
        f"torch    {f.get('torch') or f.get('torch_error')} (CUDA {f.get('torch_cuda') or '-'}; "
        f"the reference: {_reference(ref, f)})",
        f"cupy     {f.get('cupy') or f.get('cupy_error')}; numpy {f.get('numpy')}; "
        f"python {f.get('python')}; {f.get('cpus')} cpus",
        "",
        f"{'part':<14} {'status':<22} {'time':>8}  detail",
    ]
    details = {"device tests": _device_detail(summary), "conformance": _conformance_detail(conf),
               "bench_gpu": f"{len(summary['bench'] or [])} workloads on cuda"}
    for part in summary["parts"]:
        lines.append(f"{part['part']:<14} {part['status']:<22} {part['seconds']:>7.1f}s  "
                     f"{details.get(part['part'], '')}".rstrip())
    if conf.get("version_only") is not None and conf:
        aside = ", ".join(f"{k} {v}" for k, v in conf["version_only"].items()) or "none"
        active = ref.get("accepted") and ref.get("accepted") != ref.get("pinned")
        rule = "on" if active else "off: the reference is the pinned release"
        lines.append(f"version-only divergences set aside (rule {rule}): {aside}")
    for nodeid in conf.get("failing", [])[:10]:
        lines.append(f"  conformance failed: {nodeid}")
    if len(conf.get("failing", [])) > 10:
        lines.append(f"  ... and {len(conf['failing']) - 10} more")
    if summary["bench"]:
        lines += ["", f"{'workload [cuda]':<40} {'impl':>10} {'torch':>10} {'impl/torch':>10}"]
        for row in summary["bench"]:
            ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"
            impl, torch = _seconds(row["impl"]), _seconds(row["torch"])
            lines.append(f"{row['name']:<40} {impl:>10} {torch:>10} {ratio:>10}")
    verdict = "every part ran" if summary["every_part_ran"] else "NOT every part ran"
    lines += ["", f"{verdict}; logs and results: gpu_check.tar.gz"]
    return "\n".join(lines)


def _reference(ref: dict[str, Any], found: dict[str, Any]) -> str:
    """The reference release the conformance run accepted and the pin (from its results.json, else
    from the release the script passed it)."""
    if ref:
        return f"accepted {ref.get('accepted')}, pin {ref.get('pinned')}"
    return f"--reference-version {found.get('torch_release') or '-'}, no results.json"


def _device_detail(summary: dict[str, Any]) -> str:
    counts = summary["device_tests"]
    if not counts:
        return "no JUnit report"
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    return (f"{counts['tests']} tests: {passed} passed, {counts['failures']} failed, "
            f"{counts['errors']} errors, {counts['skipped']} skipped")


def _conformance_detail(conf: dict[str, Any]) -> str:
    if not conf:
        return "no results.json"
    t = conf["tests"]
    text = (f"{t['tests']} tests: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped, "
            f"{t['unsupported']} unsupported; {conf['programs']} programs on {conf['device']}")
    return text + (f" ({conf['incomplete']})" if conf.get("incomplete") else "")


def main(argv: list[str]) -> int:
    if argv[:1] == ["facts"] and len(argv) == 2:
        Path(argv[1]).write_text(json.dumps(facts(), indent=1) + "\n")
        return 0
    if argv[:1] == ["summary"] and len(argv) == 3:
        stage, out = Path(argv[1]), Path(argv[2])
        facts_file = stage / "facts.json"
        found = json.loads(facts_file.read_text()) if facts_file.exists() else {}
        summary = summarize(stage, found)
        text = table(summary)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        (out / "summary.txt").write_text(text + "\n")
        print(text)
        return 0 if summary["every_part_ran"] else 1
    print("usage: python -m benchmarks.gpu_check facts FILE | summary STAGE OUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
