"""The HTML report of a real conformance run, opened in headless Chromium and read as a user would.

A tiny run (two seed scripts against the planted fault ``grad_off``: one passes, one diverges)
writes results.json and index.html; the page must then show results.json's numbers, filter its
rule table, lead from the failing rule to its divergence (both sides, a repro script that copies
and, run with real torch, prints the reference side), stay within a laptop screen, print without
its controls, load nothing from the network, and keep hostile text inert. The screenshot goes to
``reports/report-screenshot.png``.

A second run has one conformance test per planted torch fault (``oracle.faults``), so that every
class of divergence occurs, one test is unsupported, one is cut short by the triage caps and the
run stops early (``--maxfail``): the page must count every class, show the unsupported status and
what the backend lacks, and say that the run is incomplete and cut short.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, browser
from tests.helpers.browser import chromium_page, require_browser

pytest.importorskip("jinja2")

from oracle.compare import CLASSES  # noqa: E402
from oracle.report import STATUSES  # noqa: E402
from oracle.results import STATUS_ORDER  # noqa: E402

SCREENSHOT = ROOT / "reports" / "report-screenshot.png"
FAULT = "fault:grad_off"
PASSING, FAILING = "SEED-001-1", "SEED-001-2"  # the first reads no .grad, the second prints one
A4_PRINTABLE = {"width": 680, "height": 960}  # 180 mm x 254 mm at 96 CSS px per inch
HOSTILE = '<img src=x onerror="alert(1)"><script>alert("pwned")</script>'
TEXTS = "cells => cells.map(c => c.textContent.trim())"
ROWS_SHOWN = "rows => rows.filter(r => r.getClientRects().length > 0).map(r => r.cells[0].textContent.trim())"


def conformance_run(out: Path) -> dict:
    """Run the two seed tests against the fault with ``--report`` into ``out``; return results.json."""
    command = [sys.executable, "-m", "pytest", "conformance/test_seeds.py", "-k", f"{PASSING} or {FAILING}",
               "--backend", FAULT, "--report", "--results", str(out / "results.json"),
               "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 1, f"expected one failure:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert (out / "index.html").exists(), done.stdout[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    status = {rule["id"]: rule["status"] for rule in results["rules"]}
    assert (status[PASSING], status[FAILING]) == ("passed", "failed"), "the run no longer has one of each"
    return results


# One conformance test per planted torch fault, each under a rule of a family where such a fault
# would show; "torch" passes, "never_run" is not reached (--maxfail stops the run before it).
EVERY_CLASS_SUITE = '''
import pytest

from oracle.backends import load_backend
from oracle.differential import check
from oracle.faults import CRASHING
from oracle.program import Backward, Leaf, Observe, Op, Program, Ref
from oracle.runner import Isolated
from tests.oracle.test_meta_faults import EXPOSING

RULES = {"torch": "LEAF-003", "hook_order_swapped": "HOOK-001", "grad_off": "ACC-001",
         "retain_graph_error_suppressed": "RG-001", "is_leaf_inverted": "LEAF-001",
         "warning_dropped": "ERR-001", "mean_off": "OPS-001", "sum_float64": "TEN-002",
         "neg_as_mul": "LEAF-002",
         "backward_error_reworded": "ERR-002", "everything_contiguous": "TEN-003",
         "parameters_sorted": "MOD-002", "sigmoid_missing": "OPS-002", "pow_segfault": "OPS-003",
         "never_run": "LEAF-004"}
# grad_off's second failing program: triage collects both, and the test stops at the cap of 2
MORE = {"grad_off": [Program([Leaf("w", [3.0], requires_grad=True), Op("y", "sin", [Ref("w")]),
                              Backward("y"), Observe("w")])]}


@pytest.mark.parametrize("fault", [pytest.param(f, marks=pytest.mark.rule(r)) for f, r in RULES.items()])
def test_fault(fault, backend, reference):
    if fault in ("torch", "never_run"):
        check(EXPOSING["grad_off"][0], reference, reference)
        return
    if backend.name == f"fault:{fault}":  # the session's backend: the probe sees what it lacks
        runner = backend
    else:
        runner = Isolated(f"fault:{fault}") if fault in CRASHING else load_backend(f"fault:{fault}")
    try:
        for program in [EXPOSING[fault][0], *MORE.get(fault, [])]:
            check(program, runner, reference)
    finally:
        if runner is not backend:
            runner.close()
'''
SESSION_FAULT = "sigmoid_missing"  # the session's backend: its missing name is in the probe
FAILING_FAULTS = 12  # every fault but the unsupported one fails its test


def every_class_run(out: Path) -> dict:
    """Run ``EVERY_CLASS_SUITE`` in triage with ``--report`` into ``out``; return results.json."""
    (out / "test_every_class.py").write_text(EVERY_CLASS_SUITE, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "test_every_class.py", "-p", "oracle.plugin",
               "-p", "no:cacheprovider", "--backend", f"fault:{SESSION_FAULT}",
               "--hypothesis-profile", "triage", "--test-failures", "2", "--maxfail", str(FAILING_FAULTS),
               "--results", str(out / "results.json"), "--report", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert all(results["totals"]["classes"].values()), results["totals"]["classes"]
    assert results["totals"]["unsupported"] == 1 and results["totals"]["cut_short"] == 1
    assert results["incomplete"] == f"stopping after {FAILING_FAULTS} failures"
    return results


def benchmark_document() -> dict:
    """A benchmarks.json as ``nox -s bench`` writes it (values made up, shape real): the W1 chain
    at three sizes on cpu (with HIPS autograd as a peer) and on cuda, and a memory row."""
    from benchmarks.results import Measurement, document, pair_rows

    measurements = []
    for device, scale in (("cpu", 1.0), ("cuda", 0.1)):
        for n in (1_000, 10_000, 100_000):
            params = {"workload": "W1", "n": n}
            for engine, per_node in (("impl", 4e-6), ("torch", 1.5e-6), ("autograd", 7e-6)):
                if engine != "autograd" or device == "cpu":
                    measurements.append(Measurement(f"W1 chain N={n}", device, engine, per_node * n * scale,
                                                    "s", params))
    measurements += [Measurement("W5 memory growth", "cpu", "impl", 1.5, "MiB", {}, comparable=False),
                     Measurement("W5 memory growth", "cpu", "torch", 0.0, "MiB", {}, comparable=False)]
    return document(pair_rows(measurements), {"torch": "2.13.0+cpu"}, machine="a test machine")


def test_report_of_a_planted_fault_in_chromium(tmp_path: Path) -> None:
    require_browser()  # before the conformance run: a skip or a failure should come at once
    (tmp_path / "benchmarks.json").write_text(json.dumps(benchmark_document()), encoding="utf-8")
    results = conformance_run(tmp_path)
    requests: list[str] = []
    problems: list[str] = []
    with chromium_page() as page:
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.goto((tmp_path / "index.html").as_uri())

        check_header_and_summary(page, results)
        check_family_chart(page, results)
        check_filters(page, results)
        check_performance(page)
        check_no_sideways_scrolling(page)  # at laptop size
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        script = check_divergence(page, results)
        check_print_stylesheet(page)

    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG")
    fetched = [url for url in requests if not url.startswith(("file:", "data:"))]
    assert fetched == [], "the page is not self-contained"
    assert problems == []
    check_repro_prints_reference(script, results, tmp_path)


# --------------------------------------------------------------------------- checks on the page


def check_header_and_summary(page, results: dict) -> None:
    """The header names what was compared; every summary number is results.json's."""
    header = page.inner_text("header")
    assert f"{results['backend']['name']} {results['backend']['version']}" in header
    assert f"torch {results['reference']['version']}" in header
    assert results["hypothesis_profile"] in header and results["device"] in header
    totals = results["totals"]
    assert page.inner_text("#programs") == str(totals["programs"])
    assert page.inner_text("#rules-total") == str(totals["rules"]) == str(len(results["rules"]))
    for status, count in totals["rule_status"].items():
        assert page.inner_text(f"#rules-{status}") == str(count), status
    assert page.inner_text("#tests-total") == str(totals["tests"])
    for status in STATUS_ORDER:
        assert page.inner_text(f"#tests-{status}") == str(totals[status]), status
    assert page.inner_text("#known-divergences") == str(totals["known_divergences"])
    assert page.locator(".banner").count() == 0, "a complete run, nothing cut short: no banner"


def check_family_chart(page, results: dict) -> None:
    """One row per family whose cells (read under their column headings) and bar segments
    (measured on screen) agree with results.json."""
    headings = page.eval_on_selector_all("#families thead th", TEXTS)
    shown = {}
    for row in page.query_selector_all("#families tbody tr"):
        cells = row.eval_on_selector_all("td", TEXTS)
        shown[cells[0]] = dict(zip(headings, cells, strict=True))
    assert set(shown) == {family["family"] for family in results["families"]}
    for family in results["families"]:
        row = shown[family["family"]]
        assert row["Rules"] == str(sum(family["rules"].values()))
        for status, count in family["rules"].items():
            assert row[status.capitalize()] == str(count), (family["family"], status)
        assert row["Tests"] == str(sum(family["tests"].values()))
        assert row["Programs"] == str(family["programs"])

        bar = page.locator(f'#families tr[data-family="{family["family"]}"] .bar')
        total = bar.bounding_box()["width"]
        for status, count in family["rules"].items():
            segment = bar.locator(f"div.{status}")
            if count == 0:
                assert segment.count() == 0
                continue
            share = segment.bounding_box()["width"] / total
            assert abs(share - count / sum(family["rules"].values())) < 0.01, (family["family"], status)


def check_filters(page, results: dict) -> None:
    """Choosing a family and/or a status shows exactly the rules that have them."""
    rules = results["rules"]

    def shown() -> list[str]:
        return page.eval_on_selector_all("#rule-table tr.rule", ROWS_SHOWN)

    def choose(family: str = "", status: str = "") -> None:
        page.select_option("#filter-family", family)
        page.select_option("#filter-status", status)

    assert shown() == [rule["id"] for rule in rules]
    assert page.inner_text("#shown-count") == f"{len(rules)} of {len(rules)} rules"
    for status in ("failed", "passed", "unchecked"):
        choose(status=status)
        expected = [rule["id"] for rule in rules if rule["status"] == status]
        assert expected and shown() == expected, status
        assert page.inner_text("#shown-count") == f"{len(expected)} of {len(rules)} rules"
    for family in {rule["family"] for rule in rules}:
        choose(family=family)
        assert shown() == [rule["id"] for rule in rules if rule["family"] == family], family
        choose(family=family, status="failed")
        assert shown() == [r["id"] for r in rules if r["family"] == family and r["status"] == "failed"]
    choose()
    assert len(shown()) == len(rules)


def check_divergence(page, results: dict) -> str:
    """The failing rule's link leads to its divergence: both sides of the first divergent event,
    the repro script with a working copy button, the full runs collapsed. Returns the copied script."""
    rule = next(rule for rule in results["rules"] if rule["id"] == FAILING)
    [index] = rule["divergences"]
    divergence = results["divergences"][index]
    first = divergence["details"]["divergence"]

    row = page.locator("#rule-table tr.rule", has=page.locator(f'td:first-child code:text-is("{FAILING}")'))
    row.get_by_role("link", name=f"divergence {index + 1}").click()
    assert page.url.endswith(f"#div-{index}")
    article = page.locator(f"#div-{index}")
    top = round(article.bounding_box()["y"])  # a scrolled-to anchor may sit a subpixel above 0
    assert 0 <= top < browser.LAPTOP["height"], "the link did not scroll to it"
    assert FAILING in article.locator("h3").inner_text()

    heads = article.locator(".side .head").all_inner_texts()
    assert heads == ["field", "torch (reference)", FAULT]
    differing = article.locator(".side .differs").all_inner_texts()
    assert first["ref_event"] in differing and first["test_event"] in differing
    assert first["ref_event"] != first["test_event"]

    article.get_by_role("button", name="Copy").click()
    article.get_by_role("button", name="Copied").wait_for(timeout=2000)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == divergence["details"]["repro"]
    assert article.locator(".script .kw").first.inner_text() in {"import", "from", "torch"}  # highlighted

    for label in ("Full reference (torch) run", "Full backend run"):
        details = article.locator("details", has=page.get_by_text(label, exact=True))
        assert details.get_attribute("open") is None, f"{label} should start collapsed"
    return copied


def check_performance(page) -> None:
    """CPU and GPU apart; a scaling chart per device with one visible line per engine, its labels
    inside the chart; no ratio where the benchmark says it means nothing."""
    assert page.locator("#performance h3").all_inner_texts() == ["CPU", "CUDA (GPU)"]
    for device, engines in (("cpu", {"impl", "torch", "autograd"}), ("cuda", {"impl", "torch"})):
        chart = page.locator(f'#performance [data-device="{device}"] figure.curve svg')
        box = chart.bounding_box()
        lines = chart.locator("polyline.series")
        assert {lines.nth(i).get_attribute("data-engine") for i in range(lines.count())} == engines
        for i in range(lines.count()):
            assert lines.nth(i).bounding_box()["width"] > box["width"] / 2
        for label in chart.locator("text").all():
            inside = label.bounding_box()
            assert box["x"] <= inside["x"] and inside["x"] + inside["width"] <= box["x"] + box["width"] + 0.5
    memory = page.locator("#performance tr", has=page.get_by_text("W5 memory growth"))
    assert memory.locator("td").nth(3).inner_text() == "—" and memory.locator(".ratio").count() == 0


def check_no_sideways_scrolling(page) -> None:
    """Nothing wider than the window: the page itself never scrolls sideways."""
    width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"page is {width[0]}px wide in a {width[1]}px window"


def check_print_stylesheet(page) -> None:
    """On paper (A4 less margins, 680 CSS px): no controls, status colours kept, code wrapped,
    nothing cut off at the right edge; and Chromium prints it."""
    page.emulate_media(media="print")
    page.set_viewport_size(A4_PRINTABLE)
    try:
        check_no_sideways_scrolling(page)
        assert not page.locator(".filters").is_visible()
        assert not page.locator("button.copy").first.is_visible()
        adjust = page.eval_on_selector(".status.failed", "e => getComputedStyle(e).printColorAdjust")
        assert adjust == "exact"
        assert page.eval_on_selector("pre", "e => getComputedStyle(e).whiteSpace") == "pre-wrap"
        assert page.pdf(format="A4").startswith(b"%PDF")
    finally:
        page.emulate_media(media="screen")
        page.set_viewport_size(browser.LAPTOP)


def check_repro_prints_reference(script: str, results: dict, tmp_path: Path) -> None:
    """The copied repro, run with real torch, shows the reference side of the divergent event."""
    divergence = results["divergences"][0]
    first, reference = divergence["details"]["divergence"], divergence["details"]["reference_run"]
    path = tmp_path / "repro.py"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert first["ref_event"] in done.stdout.splitlines()
    assert first["test_event"] not in done.stdout
    assert done.stdout == reference["stdout"]


# --------------------------------------------------------------------------- escaping, set-up


def test_hostile_text_stays_text_in_chromium(tmp_path: Path) -> None:
    """Markup in a sentence, an event, a message, a script or a benchmark shows as text and runs
    nothing."""
    require_browser()
    from oracle.report import write_report
    from tests.oracle.test_report import RESULTS

    results = copy.deepcopy(RESULTS)
    results["rules"][1]["sentence"] = HOSTILE
    results["divergences"][0]["details"]["divergence"]["ref_event"]["value"]["is_leaf"] = HOSTILE
    repro = f"print('{HOSTILE}')"
    results["divergences"][1]["message"] = f"RuntimeError: {HOSTILE}\n\nRepro (torch script):\n{repro}\n"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    (tmp_path / "site").mkdir()
    bench = [{"name": HOSTILE, "device": HOSTILE, "impl": 2.0, "torch": 1.0,
              "params": {"workload": HOSTILE, "n": n}} for n in (10, 100)]
    (tmp_path / "site" / "benchmarks.json").write_text(json.dumps({"machine": HOSTILE, "results": bench}))
    page_path = write_report(path, tmp_path / "site")
    problems: list[str] = []
    with chromium_page() as page:
        page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
        page.on("request", lambda request: problems.append(request.url) if "/x" in request.url else None)
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("document.scripts.length") == 1
        assert page.evaluate("document.images.length") == 0
        assert page.locator("#rule-table").get_by_text(HOSTILE).count() == 1
        assert HOSTILE in page.locator("#div-0 .side .differs").all_inner_texts()
        assert page.locator("#div-1 .script pre").text_content() == repro
        assert page.locator("#performance td").get_by_text(HOSTILE).count() == 2
        assert page.locator("#performance figcaption").get_by_text(HOSTILE).count() == 1
    assert problems == []


def test_missing_browser_fails_with_instructions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(browser.NO_BROWSER, raising=False)
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.fail.Exception, match="apt-get install chromium chromium-driver"):
        require_browser()


def test_explicit_opt_out_skips_with_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(browser.NO_BROWSER, "1")
    with pytest.raises(pytest.skip.Exception, match="ORACLE_NO_BROWSER=1"):
        require_browser()


def test_every_class_of_divergence_in_chromium(tmp_path: Path) -> None:
    """Every class counted (and described) in its table, the unsupported status in the summary,
    legend, rule table and filter, the capability table, the triage and incomplete banners, and
    the collected second program of a test with its own repro."""
    require_browser()
    results = every_class_run(tmp_path)
    problems: list[str] = []
    with chromium_page() as page:
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        page.goto((tmp_path / "index.html").as_uri())

        for kind, count in results["totals"]["classes"].items():
            row = page.locator(f'#class-table tr[data-class="{kind}"]')
            assert row.is_visible() and count >= 1, kind
            assert page.inner_text(f"#class-{kind}") == str(count), kind
            assert row.locator("td").nth(1).inner_text() == CLASSES[kind]
        assert page.locator("#class-table tbody tr").count() == len(CLASSES)

        assert page.inner_text("#rules-unsupported") == "1" and page.inner_text("#tests-unsupported") == "1"
        background = "e => getComputedStyle(e).backgroundColor"
        colours = {status: page.eval_on_selector(f".legend .{status}", background) for status in STATUSES}
        assert len(set(colours.values())) == len(STATUSES), colours  # unsupported has a colour of its own
        page.select_option("#filter-status", "unsupported")
        assert page.eval_on_selector_all("#rule-table tr.rule", ROWS_SHOWN) == ["OPS-002"]
        assert page.inner_text("#shown-count") == f"1 of {len(results['rules'])} rules"
        row = page.locator('#rule-table tr.rule[data-status="unsupported"]')
        assert row.locator(".status.unsupported").is_visible()
        assert "lacks torch.sigmoid (1)" in row.locator("td.outcomes").inner_text()
        page.select_option("#filter-status", "")

        ops = page.locator('#probe-missing tr[data-area="ops"]').inner_text()
        assert ops.split("\t") == ["ops", "1", "torch.sigmoid"]
        lacks = page.locator("#family-lacks tbody tr")
        assert lacks.count() == 1 and lacks.first.inner_text().split("\t") == [
            "op values and gradients", "torch.sigmoid", "1"]
        assert "1 of 1 programs need torch.sigmoid" in page.inner_text("#unsupported-tests")

        incomplete = page.locator("#incomplete-banner")
        assert incomplete.is_visible()
        assert f"stopping after {FAILING_FAULTS} failures" in incomplete.inner_text()
        cut_short = page.locator("#cut-short-banner")
        assert cut_short.is_visible() and cut_short.inner_text().startswith("1 test cut short by the triage")
        assert "2 failing programs" in cut_short.inner_text()
        acc = page.locator('td:first-child code:text-is("ACC-001")')
        cut_row = page.locator("#rule-table tr.rule", has=acc)
        assert cut_row.locator(".cut-short-mark").is_visible()

        [index] = next(rule for rule in results["rules"] if rule["id"] == "ACC-001")["divergences"]
        article = page.locator(f"#div-{index}")
        others = results["divergences"][index]["details"]["other_programs"]
        assert len(others) == 1
        assert article.locator("h4").inner_text() == "1 more failing program of this test (triage)"
        article.locator("summary", has_text="Repro of program 2").click()
        article.locator(".other-program").get_by_role("button", name="Copy").click()
        assert page.evaluate("navigator.clipboard.readText()") == others[0]["repro"]
        crash = page.locator("article", has=page.locator('table.all-divergences tr[data-kind="crash"]'))
        assert crash.count() == 1 and "SIGSEGV" in crash.locator("tr.first").inner_text()
        check_no_sideways_scrolling(page)
        check_print_stylesheet(page)  # banners, class and capability tables fit on paper too
    assert problems == []
