"""The HTML report, rendered from a synthetic results.json shaped as the plugin writes it."""

from __future__ import annotations

import copy
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("jinja2")

from oracle.compare import CLASSES  # noqa: E402
from oracle.report import STATUSES, highlight_python, main, source_label, write_report  # noqa: E402
from oracle.results import STATUS_ORDER  # noqa: E402

HOSTILE = '<script>alert("pwned")</script>'
SCRIPT = 'import torch\nx = torch.tensor([1.0], requires_grad=True)  # a leaf\nprint(x.is_leaf, "ok")\n'


def rule(rid: str, family: str, status: str, tests: int, programs: int, divergences=(), **more) -> dict:
    return {"id": rid, "family": family, "sentence": f"sentence of {rid}", "source": "seed 001",
            "status": status, "tests": [f"conformance/t.py::test_{rid}_{i}" for i in range(tests)],
            "programs": programs, "program_outcomes": {"passed": programs}, "classes": {}, "ignored": {},
            "lacks": {}, "cut_short": 0, "divergences": list(divergences), "known_divergences": [], **more}


def statuses(**counts: int) -> dict[str, int]:
    return {status: counts.get(status, 0) for status in (*STATUS_ORDER, "unchecked")}


def summaries(*rows: tuple) -> list[dict]:
    """Divergence summaries as DivergenceError.to_dict() writes them: (index, step, kind, reason,
    lacks, follows)."""
    found = []
    for index, step, kind, reason, lacks, follows in rows:
        entry = {"index": index, "step": step, "kind": kind, "reason": reason}
        if lacks:
            entry["lacks"] = lacks
        if follows is not None:
            entry["follows"] = follows
        found.append(entry)
    return found


ALL_CLASSES = dict.fromkeys(CLASSES, 0)
RESULTS = {
    "schema": 2,
    "backend": {"name": "mytorch", "version": "0.3.1", "module": "mytorch",
                "file": "/site-packages/mytorch/__init__.py", "imports_torch": False},
    "device": "cpu",
    "isolation": "process",
    "ignore": ["warning"],
    "reference": {"name": "torch", "version": "2.13.0+cpu", "file": "/site-packages/torch/__init__.py",
                  "pinned": "2.13.0", "accepted": "2.13.0"},
    "numpy": "2.4.6",
    "cupy": None,
    "python": "3.11.7",
    "platform": "Linux",
    "date": "2026-11-22T06:00:00+00:00",
    "hypothesis_profile": "ci",
    "totals": {"tests": 7, "failed": 2, "xpassed": 0, "unsupported": 1, "xfailed": 1, "passed": 2,
               "skipped": 1, "known_divergences": 1, "programs": 731, "duration": 12.5, "rules": 6,
               "program_outcomes": {"passed": 700, "failed": 19, "unsupported": 12},
               "classes": {**ALL_CLASSES, "flag": 7, "gradient": 3, "unsupported": 12, "hook": 2},
               "ignored": {"warning": 4}, "cut_short": 0,
               "rule_status": statuses(failed=2, unsupported=1, xfailed=1, passed=1, unchecked=1)},
    "families": [
        {"family": "leaf rules", "rules": statuses(failed=1, passed=1, unchecked=1),
         "tests": statuses(failed=1, passed=2), "programs": 500, "classes": {"flag": 7, "gradient": 3},
         "lacks": {}},
        {"family": "hook order", "rules": statuses(failed=1, xfailed=1),
         "tests": statuses(failed=1, xfailed=1, skipped=1), "programs": 231, "classes": {"hook": 2},
         "lacks": {}},
        {"family": "op values", "rules": statuses(unsupported=1), "tests": statuses(unsupported=1),
         "programs": 0, "classes": {"unsupported": 12}, "lacks": {"torch.logaddexp": 9, "Tensor.xlogy_": 3}},
        {"family": "optimisers", "rules": statuses(), "tests": statuses(), "programs": 0, "classes": {},
         "lacks": {}},
    ],
    "capabilities": {
        "probe": {"missing": {"ops": ["torch.logaddexp", "Tensor.xlogy_"],
                              "grad modes": ["torch.inference_mode"]},
                  "unknown": {"Node": "tensor * 2 of a tensor that requires grad has no grad_fn"},
                  "device_error": None, "names": 356},
        "families": [{"family": "op values", "lacks": {"Tensor.xlogy_": 3, "torch.logaddexp": 9}}],
    },
    "rules": [
        rule("LEAF-001", "leaf rules", "passed", 2, 400),
        rule("LEAF-002", "leaf rules", "failed", 1, 100, [0], program_outcomes={"passed": 90, "failed": 10},
             classes={"flag": 7, "gradient": 3}),
        rule("LEAF-003", "leaf rules", "unchecked", 0, 0, program_outcomes={}),
        rule("HOOK-001", "hook order", "failed", 2, 200, [1], program_outcomes={"passed": 191, "failed": 9},
             classes={"hook": 2}, ignored={"warning": 4}),
        rule("HOOK-002", "hook order", "xfailed", 1, 31),
        rule("OPS-009", "op values", "unsupported", 1, 12, program_outcomes={"unsupported": 12},
             classes={"unsupported": 12}, lacks={"torch.logaddexp": 9, "Tensor.xlogy_": 3}),
    ],
    "tests": [
        {"nodeid": "conformance/t.py::test_HOOK-002_0", "rule": "HOOK-002", "outcome": "xfailed",
         "reason": "impl orders retain_grad first", "known_divergence": True, "phase": "", "duration": 1.0,
         "programs": 31, "message": "", "divergence": None},
        {"nodeid": "conformance/t.py::test_OPS-009_0", "rule": "OPS-009", "outcome": "unsupported",
         "reason": "unsupported: 12 of 12 programs need torch.logaddexp (9), Tensor.xlogy_ (3)",
         "known_divergence": False, "phase": "", "duration": 1.0, "programs": 12, "message": "",
         "divergence": None, "cut_short": None},
    ],
    "divergences": [
        {"nodeid": "conformance/t.py::test_LEAF-002_0", "rule": "LEAF-002", "phase": "call",
         "message": f"divergence at event 2: is_leaf differs\n\nRepro (torch script):\n{SCRIPT}",
         "details": {
             "divergence": {"index": 2, "reason": "is_leaf differs", "kind": "flag",
                            "ref_event": {"kind": "value", "value": {"is_leaf": True, "shape": []}},
                            "test_event": {"kind": "value", "value": {"is_leaf": False, "shape": []}}},
             "divergences": summaries(
                 (1, 1, "unsupported", "the backend lacks torch.amax", "torch.amax", None),
                 (2, 2, "flag", "is_leaf differs", None, None),
                 (4, 3, "gradient", "x.grad: expected a tensor, got None", None, 1),
             ),
             "classes": {"unsupported": 1, "flag": 1, "gradient": 1},
             "program": {"steps": [{"op": "leaf"}]},
             "ref_trace": {"events": [{"kind": "value"}, {"kind": "flags", "is_leaf": True}]},
             "test_trace": {"events": [{"kind": "value"}, {"kind": "flags", "is_leaf": False}]},
         }},
        {"nodeid": "conformance/t.py::test_HOOK-001_0", "rule": "HOOK-001", "phase": "call",
         "message": f"RuntimeError: {HOSTILE}", "details": None},
    ],
}


VOID = {"br", "img", "input", "meta", "link", "hr"}


class Text(HTMLParser):
    """Element text by id, to read numbers off the page as a reader would."""

    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in VOID:  # never closed: a line break reads as a space
            self.handle_data(" " if tag == "br" else "")
            return
        self._open.append(dict(attrs).get("id"))
        if self._open[-1]:
            self.by_id[self._open[-1]] = ""

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for element in self._open:
            if element:
                self.by_id[element] += data


def render(tmp_path: Path, results: dict = RESULTS) -> str:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    return write_report(path, tmp_path / "site").read_text()


def text_by_id(html: str) -> dict[str, str]:
    parser = Text()
    parser.feed(html)
    return {key: value.strip() for key, value in parser.by_id.items()}


def test_counts_match_results(tmp_path: Path) -> None:
    ids = text_by_id(render(tmp_path))
    totals = RESULTS["totals"]
    assert ids["programs"] == "731"
    assert ids["rules-total"] == "6" and ids["tests-total"] == "7"
    assert list(totals["rule_status"]) == list(STATUSES)
    for status, count in totals["rule_status"].items():
        assert ids[f"rules-{status}"] == str(count), status
    for status in STATUS_ORDER:
        assert ids[f"tests-{status}"] == str(totals[status]), status
    assert ids["rules-unsupported"] == "1" and ids["tests-unsupported"] == "1"
    assert ids["known-divergences"] == "1"
    assert ids["programs-total"] == "731"
    programs = ids["programs-passed"], ids["programs-failed"], ids["programs-unsupported"]
    assert programs == ("700", "19", "12")
    assert ids["divergences-total"] == "24" and ids["ignored-total"] == "4"


def test_statuses_follow_the_results_order_with_unsupported_everywhere(tmp_path: Path) -> None:
    assert STATUSES == (*STATUS_ORDER, "unchecked") and "unsupported" in STATUSES
    html = render(tmp_path)
    legend = html.split('<p class="legend">')[1].split("</p>")[0]
    assert re.findall(r'<span class="([a-z]+)"></span>', legend) == list(STATUSES)
    options = html.split('id="filter-status">')[1].split("</select>")[0]
    assert re.findall(r"<option>([a-z]+)</option>", options) == list(STATUSES)
    headings = html.split('<table id="families">')[1].split("</thead>")[0]
    columns = re.findall(r'<th class="n">([A-Z][a-z]+)</th>', headings)
    assert columns[1:8] == [status.capitalize() for status in STATUSES]
    assert "--unsupported: #" in html
    assert ".status.unsupported, .bar .unsupported, .legend .unsupported" in html  # coloured as the others
    bar = re.search(r'<tr data-family="op values">.*?</tr>', html, re.S).group(0)
    assert '<div class="unsupported" style="width: 100.00%" title="1 unsupported">' in bar


def test_family_rows_and_rule_table(tmp_path: Path) -> None:
    html = render(tmp_path)
    rows = re.findall(r'<tr data-family="([^"]+)">(.*?)</tr>', html, re.S)
    cells = {family: re.findall(r'<td class="n">([^<]*)</td>', row) for family, row in rows}
    # rules; failed, xpassed, unsupported, xfailed, passed, skipped, unchecked rules; tests, programs
    assert cells == {"leaf rules": ["3", "1", "0", "0", "0", "1", "0", "1", "3", "500"],
                     "hook order": ["2", "1", "0", "0", "1", "0", "0", "0", "3", "231"],
                     "op values": ["1", "0", "0", "1", "0", "0", "0", "0", "1", "0"],
                     "optimisers": ["0", "0", "0", "0", "0", "0", "0", "0", "0", "0"]}
    statuses = re.findall(r'<tr class="rule" data-family="[^"]+" data-status="([a-z]+)">', html)
    assert statuses == ["passed", "failed", "unchecked", "failed", "xfailed", "unsupported"]
    assert 'href="#div-0"' in html and 'href="#div-1"' in html and 'id="div-1"' in html
    assert "impl orders retain_grad first" in html


def test_divergence_side_by_side_and_repro(tmp_path: Path) -> None:
    html = render(tmp_path)
    article = html.split('id="div-0"')[1].split("</article>")[0]
    assert "First divergence</b> at event 2: is_leaf differs" in article
    differing = re.findall(r'<div class="differs">([^<]*)</div>', article)
    assert differing == ["value.is_leaf", "true", "false"]
    assert '<button class="copy"' in article
    assert '<span class="kw">import</span> <span class="kw">torch</span>' in article
    assert '<span class="com"># a leaf</span>' in article
    assert '<span class="str">&#34;ok&#34;</span>' in article
    # the repro is shown once, as a script, not also inside the failure message
    assert article.count("requires_grad=") == 1
    assert "Full reference (torch) trace" in article and '&#34;is_leaf&#34;: false' in article
    assert "More details" in article and "&#34;steps&#34;" in article


def test_hostile_text_is_escaped(tmp_path: Path) -> None:
    results = copy.deepcopy(RESULTS)
    results["rules"][0]["sentence"] = HOSTILE
    results["divergences"][0]["details"]["divergence"]["ref_event"]["is_leaf"] = HOSTILE
    html = render(tmp_path, results)
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    assert html.count("<script>") == 1  # the page's own script only


def test_highlighting_escapes_code() -> None:
    html = str(highlight_python('s = "<b>"  # <i>\n'))
    assert html == 's = <span class="str">&#34;&lt;b&gt;&#34;</span>  <span class="com"># &lt;i&gt;</span>\n'
    assert str(highlight_python('broken = "unterminated\n<x>')).endswith("&lt;x&gt;")


def test_history_is_appended_and_charted(tmp_path: Path) -> None:
    site = tmp_path / "site"
    html = render(tmp_path)
    assert 'id="trend"' not in html  # a single run has no trend
    later = copy.deepcopy(RESULTS)
    later["date"] = "2026-11-23T06:00:00+00:00"
    later["totals"]["rule_status"]["passed"] = 4
    html = render(tmp_path, later)
    render(tmp_path, later)  # the same run rendered again is not a new entry
    runs = [json.loads(p.read_text()) for p in sorted((site / "history").glob("*.json"))]
    assert [run["date"] for run in runs] == [RESULTS["date"], later["date"]]
    assert [run["pass_rate"] for run in runs] == [1 / 6, 4 / 6]
    assert 'id="trend"' in html
    assert re.search(r'<polyline points="0\.0,83\.33 100\.0,33\.33"', html)
    assert "4 / 6 (67%)" in html


def test_performance_section(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    benchmarks = [{"name": "mlp backward", "device": "cpu", "impl": 0.03, "torch": 0.01},
                  {"name": "chain 100k", "impl": 2.0, "torch": 1.0, "ratio": 2.0}]
    (tmp_path / "site" / "benchmarks.json").write_text(json.dumps({"results": benchmarks}))
    html = render(tmp_path)
    section = html.split('id="performance"')[1].split("</section>")[0]
    assert "mlp backward" in section and "3.00×" in section and "2.00×" in section
    assert "30 ms" in section and "10 ms" in section
    (tmp_path / "site" / "benchmarks.json").unlink()
    assert 'id="performance"' not in render(tmp_path)


def chain_rows(device: str, impl: list[float], torch: list[float]) -> list[dict]:
    """Rows as benchmarks/results.py writes them for the W1 chain at n = 1e3, 1e4, 1e5 (the first
    len(impl) of them)."""
    sizes = (1000, 10000, 100000)[: len(impl)]
    return [{"name": f"W1 chain N={n}", "device": device, "unit": "s", "impl": i, "torch": t, "ratio": i / t,
             "params": {"workload": "W1", "n": n}} for n, i, t in zip(sizes, impl, torch, strict=True)]


def test_performance_per_device_with_ratio_bars_and_scaling_curves(tmp_path: Path) -> None:
    rows = [*chain_rows("cpu", [0.004, 0.04, 0.4], [0.001, 0.01, 0.1]),
            {"name": "W2 MLP", "device": "cpu", "unit": "s", "impl": 0.001, "torch": 0.01, "ratio": 0.1},
            {"name": "W5 memory", "device": "cpu", "unit": "MiB", "impl": 1.5, "torch": 0.0, "ratio": None},
            *chain_rows("cuda", [0.002, 0.02, 0.2], [0.001, 0.01, 0.1])]
    site = tmp_path / "site"
    site.mkdir()
    (site / "benchmarks.json").write_text(json.dumps({"machine": "box <1>", "date": "d", "results": rows}))
    section = render(tmp_path).split('id="performance"')[1].split("</section>")[0]
    cpu, cuda = section.split('data-device="cpu"')[1].split('data-device="cuda"')
    assert "box &lt;1&gt;" in section
    assert "W2 MLP" in cpu and "W2 MLP" not in cuda and "W5 memory" in cpu
    # the ratio bar: log scale around 1x, the longest ratio of the device filling half the cell
    bars = re.findall(r'<span class="(slower|faster)" style="width: ([0-9.]+)%">', cpu)
    assert bars == [("slower", "30.1"), ("slower", "30.1"), ("slower", "30.1"), ("faster", "50.0")]
    assert "1.5 MiB" in cpu and "0 MiB" in cpu and cpu.count("—") == 1  # memory: no ratio, no bar
    # one log-log chart per device, 1 ms to 1 s over 212 units of height: impl k times slower at
    # every size is a line parallel to torch's, log10(k) decades above it
    for part, slower in ((cpu, 4), (cuda, 2)):
        lines = dict(re.findall(r'data-engine="(\w+)" points="([^"]+)"', part))
        assert set(lines) == {"impl", "torch"}
        impl, ref = ([tuple(map(float, p.split(","))) for p in lines[e].split()] for e in ("impl", "torch"))
        assert [x for x, _ in impl] == [x for x, _ in ref] and impl[0][0] < impl[1][0] < impl[2][0]
        for (_, impl_y), (_, ref_y) in zip(impl, ref, strict=True):
            assert ref_y - impl_y == pytest.approx(212 * math.log10(slower) / 3, abs=0.15)
    assert "n = 100,000" in cpu and "100 ms" in cpu


def test_scaling_needs_two_sizes(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "benchmarks.json").write_text(json.dumps(chain_rows("cpu", [0.004], [0.001])))
    section = render(tmp_path).split('id="performance"')[1].split("</section>")[0]
    assert "W1 chain N=1000" in section and "<svg" not in section


def test_module_entry_point(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RESULTS))
    assert main(["--results", str(path), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "index.html")
    assert (tmp_path / "out" / "index.html").exists()


def test_script_run_divergence(tmp_path: Path) -> None:
    """oracle.script failures: events are output lines, the runs are channels of text."""
    results = copy.deepcopy(RESULTS)
    results["divergences"][1]["details"] = {
        "divergence": {"reason": "stdout line 1 differs",
                       "ref_event": "tensor([4.])", "test_event": "tensor([0.])"},
        "repro": "import torch\nprint(torch.ones(1) * 4)\n",
        "reference_run": {"backend": "torch", "stdout": "tensor([4.])\ndone\n", "exit": "0"},
        "test_run": {"backend": "impl", "stdout": "tensor([0.])\ndone\n", "exit": "0"},
    }
    article = render(tmp_path, results).split('id="div-1"')[1].split("</article>")[0]
    differing = re.findall(r'<div class="differs">([^<]*)</div>', article)
    assert differing == ["event", "tensor([4.])", "tensor([0.])"]
    run = "<summary>Full backend run</summary><pre>backend: impl\n--- stdout ---\ntensor([0.])\ndone\nexit: 0"
    assert run in article


def accepted(nodeid: str, name: str, test: float, nudged: object) -> dict:
    """An example of a value the error-aware judgement accepted, as the plugin keeps it."""
    return {"nodeid": nodeid, "index": 7, "kind": "grad", "step": 5, "name": name, "value": 3,
            "dtype": "float32", "test": test, "ref": 11.150192260742188, "ref64": 11.150137424468994,
            "nudged": nudged, "allowance": 0.00015, "repro": SCRIPT}


def test_error_aware_acceptances_are_counted_and_shown_per_rule(tmp_path: Path) -> None:
    results = copy.deepcopy(RESULTS)
    results["totals"]["error_aware_accepted"] = 9
    leaf = results["rules"][0]
    leaf["error_aware_accepted"] = 9
    leaf["error_aware_examples"] = [
        accepted("conformance/t.py::test_LEAF-001_0", "w.grad", 11.150154113769531, 11.15025806427002),
        accepted("conformance/t.py::test_LEAF-001_1", HOSTILE, 11.15010, None),
    ]
    results["rules"][1].update(error_aware_accepted=0, error_aware_examples=[])
    html = render(tmp_path, results)
    assert text_by_id(html)["error-aware-accepted"] == "9"
    rows = dict(re.findall(r'<tr class="rule"[^>]*>\s*<td><code>([^<]+)</code>(.*?)</tr>', html, re.S))
    counts = {rid: re.findall(r'<td class="n">(.*?)</td>', row)[-1] for rid, row in rows.items()}
    assert counts == {"LEAF-001": '<span class="accepted-count">9</span>', "LEAF-002": "0", "LEAF-003": "0",
                      "HOOK-001": "0", "HOOK-002": "0", "OPS-009": "0"}
    row = rows["LEAF-001"]
    assert "<summary>9 values accepted by the error-aware judgement (the first 2 below)</summary>" in row
    first, second = row.split("<li>")[1:]
    assert "<code>conformance/t.py::test_LEAF-001_0</code>, event 7 (step 5, grad):" in first
    assert "<code>w.grad</code>" in first
    assert "value 3 (float32)" in first
    assert "backend <b>11.1501541</b>, torch <b>11.1501923</b>; torch 11.150137424468994 in float64" in first
    assert ", 11.1502581 on inputs nudged by an ulp;" in first
    assert "|backend − torch| = 3.81e-05 ≤ allowance 0.00015" in first
    assert '<span class="kw">import</span> <span class="kw">torch</span>' in first  # the repro
    assert "nudged" not in second and HOSTILE not in html  # no nudged rerun; text escaped
    assert "<details" not in "".join(rows[rid] for rid in rows if rid != "LEAF-001")


def test_results_without_error_aware_counts_render(tmp_path: Path) -> None:
    """results.json from before acceptances were recorded: zero everywhere, nothing to expand."""
    html = render(tmp_path)
    assert text_by_id(html)["error-aware-accepted"] == "0"
    assert "accepted by the error-aware judgement (" not in html and 'class="accepted"' not in html


def test_docs_sources_are_named_by_page(tmp_path: Path) -> None:
    url = "https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors"
    assert source_label(url) == "autograd#saved-tensors"
    assert source_label("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html") == (
        "torch.Tensor.backward")
    assert source_label("seed 003") == "seed 003"
    results = copy.deepcopy(RESULTS)
    results["rules"][0]["source"] = url
    html = render(tmp_path, results)
    assert f'<a href="{url}" title="{url}">autograd#saved-tensors</a>' in html


# --------------------------------------------------------------------------- an engine's first run


def test_header_names_backend_reference_isolation_ignored_classes_and_profile(tmp_path: Path) -> None:
    html = render(tmp_path)
    ids = text_by_id(html)
    backend = "mytorch 0.3.1 module mytorch from /site-packages/mytorch/__init__.py"
    assert re.sub(r"\s+", " ", ids["backend"]) == f"{backend} its process does not import torch"
    assert re.sub(r"\s+", " ", ids["reference"]) == (
        "torch 2.13.0+cpu from /site-packages/torch/__init__.py pinned 2.13.0")
    assert "reference-note" not in ids  # the pinned version was the accepted one
    assert ids["isolation"] == "the backend in a worker process of its own"
    ignored = re.sub(r"\s+", " ", ids["ignored-classes"])
    assert ignored == "warning (--ignore-classes: counted apart, failing nothing)"
    assert ids["profile"] == "ci"
    assert "incomplete-banner" not in ids and "cut-short-banner" not in ids
    assert "<code>import mytorch as torch</code> it runs on the backend" in html

    results = copy.deepcopy(RESULTS)
    results["backend"].update(imports_torch=True)
    results["reference"]["accepted"] = "2.14.0"
    results.update(isolation="none", ignore=[], hypothesis_profile="triage",
                   triage={"test_failures": 3, "rule_budget": 20.0})
    ids = text_by_id(render(tmp_path, results))
    assert ids["imports-torch"] == "its process imports torch"
    note = "this run accepted torch 2.14.0 instead of the pin 2.13.0 (--reference-version)"
    assert ids["reference-note"] == note
    assert ids["isolation"] == "the backend in the suite's process (--isolation none)"
    assert ids["ignored-classes"] == "none"
    assert ids["profile"] == "triage: at most 3 failing programs per test and 20.0 s per rule"


def test_banners_for_an_incomplete_run_and_tests_cut_short(tmp_path: Path) -> None:
    results = copy.deepcopy(RESULTS)
    results["incomplete"] = f"stopping after 2 failures {HOSTILE}"
    results["totals"]["cut_short"] = 2
    results["triage"] = {"test_failures": 3, "rule_budget": 20.0}
    results["rules"][1]["cut_short"] = 2
    html = render(tmp_path, results)
    ids = text_by_id(html)
    incomplete = f"Incomplete run (stopping after 2 failures {HOSTILE}): not every"
    assert ids["incomplete-banner"].startswith(incomplete)
    assert HOSTILE not in html
    banner = re.sub(r"\s+", " ", ids["cut-short-banner"])
    caps = "(3 failing programs per test or 20.0 s per rule)"
    assert banner.startswith(f"2 tests cut short by the triage profile's caps {caps}")
    assert ids["cut-short-count"] == "2"
    rows = dict(re.findall(r'<tr class="rule"[^>]*>\s*<td><code>([^<]+)</code>(.*?)</tr>', html, re.S))
    marked = [rid for rid, row in rows.items() if 'class="cut-short-mark"' in row]
    assert marked == ["LEAF-002"]


def test_divergences_by_class_in_total_and_per_family(tmp_path: Path) -> None:
    html = render(tmp_path)
    table = html.split('<table id="class-table">')[1].split("</table>")[0]
    heads = re.findall(r"<th[^>]*>([^<]+)</th>", table.split("</thead>")[0])
    # only the families that have divergences get a column
    families = ["leaf rules", "hook order", "op values"]
    assert heads == ["Class", "What differs", "Divergences", "Ignored", *families]
    rows = re.findall(r'<tr data-class="(\w+)"( class="zero")?>(.*?)</tr>', table, re.S)
    assert [kind for kind, _, _ in rows] == list(CLASSES)
    expected = {"flag": ["7", "0", "7", "", ""], "gradient": ["3", "0", "3", "", ""],
                "hook": ["2", "0", "", "2", ""], "unsupported": ["12", "0", "", "", "12"],
                "warning": ["0", "4", "", "", ""]}
    for kind, zero, row in rows:
        assert f"<td>{CLASSES[kind]}</td>" in row.replace("&#39;", "'"), kind
        cells = re.findall(r'<td class="n"[^>]*>([^<]*)</td>', row)
        assert cells == expected.get(kind, ["0", "0", "", "", ""]), kind
        assert bool(zero) == (kind not in expected), kind
    ids = text_by_id(html)
    assert ids["class-flag"] == "7" and ids["class-ignored-warning"] == "4"
    assert re.search(r'<span class="kind">warning</span> <span class="muted">\(ignored\)</span>', table)


def test_capability_table_probe_and_per_family_names(tmp_path: Path) -> None:
    html = render(tmp_path)
    section = html.split('<section id="capabilities">')[1].split("</section>")[0]
    ids = text_by_id(section)
    assert "it lacks 3." in re.sub(r"\s+", " ", ids["probe-summary"])
    assert "the 356 names of torch's API" in ids["probe-summary"]
    areas = re.findall(r'<tr data-area="([^"]+)"><td>[^<]*</td><td class="n">(\d+)</td>\s*<td>(.*?)</td>',
                       section, re.S)
    assert areas == [("ops", "2", "<code>torch.logaddexp</code>, <code>Tensor.xlogy_</code>"),
                     ("grad modes", "1", "<code>torch.inference_mode</code>")]
    assert "<li><code>Node</code>: tensor * 2 of a tensor that requires grad has no grad_fn</li>" in section
    assert "device-error" not in ids
    needed = re.findall(r'<tr data-family="([^"]+)" data-name="([^"]+)">.*?<td class="n">(\d+)</td>', section)
    assert needed == [("op values", "torch.logaddexp", "9"), ("op values", "Tensor.xlogy_", "3")]  # most 1st
    assert ids["unsupported-tests"] == ("OPS-009 conformance/t.py::test_OPS-009_0: 12 of 12 programs need "
                                        "torch.logaddexp (9), Tensor.xlogy_ (3)")

    results = copy.deepcopy(RESULTS)
    results["capabilities"] = {"probe": {"missing": {}, "unknown": {}, "device_error": f"cuda {HOSTILE}",
                                         "names": 356}, "families": []}
    ids = text_by_id(render(tmp_path, results))
    assert "it has every one." in ids["probe-summary"]
    assert ids["device-error"] == f"The backend cannot place a tensor on cpu: cuda {HOSTILE}"
    assert ids["no-lacks"] == "No program of this run needed a name the backend lacks."
    results["capabilities"] = {"probe": None, "families": []}
    assert text_by_id(render(tmp_path, results))["probe-none"] == "No capability probe in this run."


def test_rules_show_program_outcomes_classes_and_lacked_names(tmp_path: Path) -> None:
    html = render(tmp_path)
    rows = dict(re.findall(r'<tr class="rule"[^>]*>\s*<td><code>([^<]+)</code>(.*?)</tr>', html, re.S))
    cells = {rid: row.split('<td class="outcomes">')[1].split("</td>")[0] for rid, row in rows.items()}
    outcomes = {rid: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", cell.replace("<br>", " "))).strip()
                for rid, cell in cells.items()}
    assert outcomes == {
        "LEAF-001": "400 passed",
        "LEAF-002": "90 passed, 10 failed divergences: flag 7, gradient 3",
        "LEAF-003": "",
        "HOOK-001": "191 passed, 9 failed divergences: hook 2 ignored: warning 4",
        "HOOK-002": "31 passed",
        "OPS-009": "12 unsupported divergences: unsupported 12 lacks torch.logaddexp (9), Tensor.xlogy_ (3)",
    }
    assert '<span class="status unsupported">unsupported</span>' in rows["OPS-009"]
    assert '<span class="po unsupported">12 unsupported</span>' in rows["OPS-009"]


def other_program(n: int) -> dict:
    return {"description": f"divergence at event 0 (step 1, value): y: value 0 differs {n}",
            "divergences": summaries((0, 1, "value", f"y: value 0 differs {n}", None, None),
                                     (3, 2, "graph", HOSTILE, None, None)),
            "classes": {"value": 1, "graph": 1},
            "repro": f"import torch\nprint({n})  # program {n}\n"}


def test_every_divergence_of_the_program_and_the_other_failing_programs(tmp_path: Path) -> None:
    results = copy.deepcopy(RESULTS)
    results["divergences"][0]["details"]["other_programs"] = [other_program(2), other_program(3)]
    html = render(tmp_path, results)
    article = html.split('id="div-0"')[1].split("</article>")[0]
    mine, others = article.split("more failing programs of this test (triage)")
    assert "<b>3 divergences</b> in this program: unsupported 1, flag 1, gradient 1" in mine
    table = mine.split('<table class="all-divergences">')[1].split("</table>")[0]
    rows = re.findall(r'<tr data-kind="(\w+)"(?: class="([a-z ]+)")?>\s*<td class="n">(\d+)</td>(.*?)</tr>',
                      table, re.S)
    assert [(kind, css, step) for kind, css, step, _ in rows] == [
        ("unsupported", "", "1"), ("flag", "first", "2"), ("gradient", " follows", "3")]
    assert '<span class="kind" title="a tensor&#39;s values">' not in table  # no value divergence here
    assert f'title="{CLASSES["flag"]}">flag</span>' in rows[1][3]
    assert "the backend lacks torch.amax" in rows[0][3] and "follows-note" not in rows[0][3]
    assert "(shown in full below, with its repro)" in rows[1][3]
    follows = "after step 1, which the backend could not run: this may only follow from that"
    assert f'<span class="follows-note">{follows}</span>' in rows[2][3]
    assert "<b>First divergence</b> at event 2: is_leaf differs" in mine  # shown in full as before
    assert "2 more failing programs" in article
    programs = others.split('<div class="other-program">')[1:]
    assert len(programs) == 2
    for n, program in zip((2, 3), programs, strict=True):
        assert f"<b>Program {n}</b>: 2 divergences, value 1, graph 1" in program
        assert re.findall(r'<tr data-kind="(\w+)"', program) == ["value", "graph"]
        assert f"y: value 0 differs {n}" in program and HOSTILE not in program
        assert f"<summary>Repro of program {n}</summary>" in program
        assert f'<span class="com"># program {n}</span>' in program and '<button class="copy"' in program
    assert "other_programs" not in article.split("More details")[1]  # not dumped again as raw JSON


def test_a_failure_without_divergence_summaries_renders_as_before(tmp_path: Path) -> None:
    """results.json from before every divergence was listed: no table, the first one as it was."""
    results = copy.deepcopy(RESULTS)
    details = results["divergences"][0]["details"]
    del details["divergences"], details["classes"]
    article = render(tmp_path, results).split('id="div-0"')[1].split("</article>")[0]
    assert "all-divergences" not in article and "in this program" not in article
    assert "First divergence</b> at event 2: is_leaf differs" in article
