"""Self-tests of the benchmark bookkeeping (benchmarks/results.py): pairing engines into rows,
ratios, the printed table, the JSON document the report reads. Nothing here times anything."""

from __future__ import annotations

import json

import hypothesis  # noqa: F401  (imported before pytester snapshots sys.modules)
import pytest
import torch  # noqa: F401  (a C extension cannot be imported twice: keep it out of pytester's cleanup)

from benchmarks.conftest import thread_counts
from benchmarks.results import (
    Measurement,
    by_threads,
    document,
    format_scaling,
    format_table,
    merge_previous,
    pair_rows,
    ratio,
    scaling,
    write_document,
)

pytest_plugins = "pytester"

FAKE_BENCHMARKS = '''
import pytest


def raises():
    raise AttributeError("'Tensor' object has no attribute 'frobnicate'")


@pytest.mark.parametrize("label", ["impl", "torch"])
def test_sum(recorder, label):
    recorder.time("fake sum", label, "cpu", lambda: lambda: sum(range(100)), {"n": 100}, 3)


def test_impl_cannot(recorder):
    recorder.time("fake broken", "impl", "cpu", raises, {}, 3)


def test_torch_cannot(recorder):
    recorder.time("fake broken", "torch", "cpu", raises, {}, 3)
'''


def test_impl_and_torch_of_one_workload_make_one_row_with_their_ratio() -> None:
    rows = pair_rows([
        Measurement("W1 chain N=1e3", "cpu", "impl", 0.003, params={"n": 1000}, iqr=0.0004),
        Measurement("W1 chain N=1e3", "cpu", "torch", 0.002, params={"n": 1000}, iqr=0.0001),
    ])
    assert len(rows) == 1
    row = rows[0]
    assert (row["name"], row["device"], row["impl"], row["torch"]) == ("W1 chain N=1e3", "cpu", 0.003, 0.002)
    assert row["ratio"] == pytest.approx(1.5)
    assert row["params"] == {"n": 1000}
    assert row["iqr"] == {"impl": 0.0004, "torch": 0.0001}
    assert "peers" not in row


def test_rows_differ_by_params_and_device_and_keep_first_seen_order() -> None:
    rows = pair_rows([
        Measurement("W1", "cpu", "impl", 2.0, params={"n": 10}),
        Measurement("W1", "cpu", "impl", 4.0, params={"n": 100}),
        Measurement("W1", "cuda", "impl", 8.0, params={"n": 10}),
        Measurement("W1", "cpu", "torch", 1.0, params={"n": 100}),
    ])
    assert [(r["device"], r["params"]["n"], r["impl"], r["torch"]) for r in rows] == [
        ("cpu", 10, 2.0, None), ("cpu", 100, 4.0, 1.0), ("cuda", 10, 8.0, None)]
    assert [r["ratio"] for r in rows] == [None, 4.0, None]


def test_peers_get_their_own_ratio_and_items_give_throughput() -> None:
    (row,) = pair_rows([
        Measurement("W4", "cpu", "impl", 2.0, params={"items": 40}),
        Measurement("W4", "cpu", "torch", 4.0, params={"items": 40}),
        Measurement("W4", "cpu", "both", 8.0, params={"items": 40}),
    ])
    assert row["ratio"] == 0.5
    assert row["peers"] == {"both": 8.0}
    assert row["peer_ratios"] == {"both": 0.25}
    assert row["per_second"] == {"impl": 20.0, "torch": 10.0, "both": 5.0}


def test_a_baseline_engine_gives_every_other_engine_its_ratio_over_it() -> None:
    """W4 names the in-process check as its baseline: the isolated check's ratio is isolation's cost."""
    measured = [Measurement("W4", "cpu", engine, value, params={"items": 40, "baseline": "both"})
                for engine, value in (("impl", 2.0), ("torch", 4.0), ("both", 8.0), ("isolated", 10.0))]
    (row,) = pair_rows(measured)
    assert row["baseline_ratios"] == {"impl": 0.25, "torch": 0.5, "isolated": 1.25}
    assert row["per_second"] == {"impl": 20.0, "torch": 10.0, "both": 5.0, "isolated": 4.0}
    assert "over both: impl 0.25x, torch 0.50x, isolated 1.25x" in format_table([row])
    (without,) = pair_rows(measured[:2])
    assert "baseline_ratios" not in without and "over" not in format_table([without])


def test_growth_rows_are_not_compared_and_units_must_agree() -> None:
    (row,) = pair_rows([
        Measurement("W5 growth", "cpu", "impl", 300.0, "KiB", comparable=False),
        Measurement("W5 growth", "cpu", "torch", 100.0, "KiB", comparable=False),
    ])
    assert row["ratio"] is None and row["unit"] == "KiB"
    with pytest.raises(ValueError, match="different units"):
        pair_rows([Measurement("W5", "cpu", "impl", 1.0, "MiB"), Measurement("W5", "cpu", "torch", 1.0, "s")])


@pytest.mark.parametrize(("num", "den", "expected"), [(3.0, 2.0, 1.5), (1.0, 0.0, None), (None, 1.0, None),
                                                      (1.0, None, None), (1.0, -5.0, None)])
def test_ratio(num: float | None, den: float | None, expected: float | None) -> None:
    assert ratio(num, den) == expected


def test_table_shows_times_ratios_peers_and_missing_values() -> None:
    text = format_table(pair_rows([
        Measurement("W2 MLP step", "cpu", "impl", 0.03),
        Measurement("W2 MLP step", "cpu", "torch", 0.02),
        Measurement("W2 MLP step", "cpu", "autograd", 0.06),
        Measurement("W3 CNN step", "cpu", "impl", 2.5),
    ]))
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["workload", "device", "impl", "torch"]
    mlp = next(line for line in lines if line.startswith("W2 MLP step"))
    assert "30.000 ms" in mlp and "20.000 ms" in mlp and "1.50x" in mlp
    assert "autograd 60.000 ms (0.50x)" in mlp
    cnn = next(line for line in lines if line.startswith("W3 CNN step"))
    assert "2.500 s" in cnn and cnn.count("—") == 2


def test_document_has_the_fields_the_report_reads(tmp_path) -> None:
    rows = pair_rows([Measurement("W1 chain N=1e4", "cpu", "impl", 0.3), Measurement("W1 chain N=1e4", "cpu",
                                                                                     "torch", 0.2)])
    doc = document(rows, {"torch": "2.13.0", "numpy": "2.0"}, machine="test box", date="2026-01-01T00:00:00")
    assert {"machine", "date", "torch", "numpy", "results"} <= set(doc)
    assert doc["machine"] == "test box" and doc["torch"] == "2.13.0"
    (row,) = doc["results"]
    assert {"name", "device", "impl", "torch", "ratio", "params"} <= set(row)
    assert row["date"] == "2026-01-01T00:00:00"
    path = write_document(tmp_path / "reports" / "benchmarks.json", doc)
    assert json.loads(path.read_text()) == doc


def test_report_renders_the_written_rows(tmp_path) -> None:
    pytest.importorskip("jinja2")
    from oracle.report import write_report

    rows = pair_rows([Measurement("W2 MLP step", "cpu", "impl", 0.3), Measurement("W2 MLP step", "cpu",
                                                                                "torch", 0.2)])
    write_document(tmp_path / "benchmarks.json", document(rows, {"torch": "2.13.0"}))
    from tests.oracle.test_report import RESULTS  # the report's own sample results.json

    (tmp_path / "results.json").write_text(json.dumps(RESULTS))
    page = write_report(tmp_path / "results.json", tmp_path).read_text()
    assert "W2 MLP step" in page and "1.50×" in page


def test_a_cpu_run_keeps_the_gpu_rows_and_replaces_the_cpu_ones(tmp_path) -> None:
    old = document(pair_rows([Measurement("W2", "cuda", "impl", 1.0), Measurement("W2", "cpu", "impl", 9.0)]),
                   {}, machine="gpu box", date="d1")
    new = document(pair_rows([Measurement("W2", "cpu", "impl", 2.0)]), {}, machine="cpu box", date="d2")
    merged = merge_previous(new, old)
    assert [(r["device"], r["impl"], r["machine"]) for r in merged["results"]] == [
        ("cpu", 2.0, "cpu box"), ("cuda", 1.0, "gpu box")]
    assert merged["machine"] == "cpu box"
    path = tmp_path / "benchmarks.json"
    path.write_text("not json")
    write_document(path, new)
    assert json.loads(path.read_text()) == new


@pytest.mark.parametrize("engine_name", ["impl", "autograd"])
def test_workloads_do_the_same_work_as_on_torch(engine_name: str) -> None:
    """A ratio means something only if both sides compute the same thing: from the same numbers,
    the chain's gradient and three MLP/CNN training losses match torch's."""
    import numpy as np

    from benchmarks import autograd_peer, workloads
    from benchmarks.engines import EngineUnavailable, load_engine

    try:
        engine, torch = load_engine(engine_name), load_engine("torch")
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    as_array = (lambda v: np.asarray(v)) if engine_name == "autograd" else (lambda v: v.detach().numpy())
    peer = autograd_peer if engine_name == "autograd" else workloads
    expected = workloads.chain(torch, 30)().numpy()
    np.testing.assert_allclose(as_array(peer.chain(engine, 30)()), expected, rtol=1e-5)
    shape = {"sizes": (20, 16, 5), "batch": 8}
    steps = [(peer.mlp_step(engine, **shape), workloads.mlp_step(torch, **shape))]
    if engine_name == "impl":
        steps.append((workloads.cnn_step(engine, batch=2), workloads.cnn_step(torch, batch=2)))
    for ours, theirs in steps:
        for _ in range(3):
            np.testing.assert_allclose(as_array(ours()), theirs().detach().numpy(), rtol=1e-5)


def test_scaling_gives_each_engines_time_growth_between_successive_n() -> None:
    rows = pair_rows([
        Measurement("W1 N=1e4", "cpu", "impl", 2.0, params={"workload": "W1", "n": 10_000}),
        Measurement("W1 N=1e3", "cpu", "impl", 0.1, params={"workload": "W1", "n": 1_000}),
        Measurement("W1 N=1e3", "cpu", "torch", 0.1, params={"workload": "W1", "n": 1_000}),
        Measurement("W1 N=1e4", "cpu", "torch", 1.0, params={"workload": "W1", "n": 10_000}),
        Measurement("W1 N=1e4", "cpu", "autograd", 3.0, params={"workload": "W1", "n": 10_000}),
        Measurement("W2", "cpu", "impl", 1.0, params={"workload": "W2"}),
    ])
    (step,) = scaling(rows)
    assert (step["workload"], step["device"], step["from_n"], step["to_n"]) == ("W1", "cpu", 1000, 10_000)
    assert step["growth"] == {"impl": pytest.approx(20.0), "torch": pytest.approx(10.0), "autograd": None}
    line = "W1 [cpu] time growth N=1e3 -> N=1e4: impl 20.00x, torch 10.00x, autograd —"
    assert format_scaling([step]) == line


def test_each_thread_setting_has_its_own_scaling_and_rows_group_by_setting() -> None:
    rows = pair_rows([
        Measurement(f"W1 N={n} ({t})", "cpu", engine, n * t / 1000,
                    params={"workload": "W1", "n": n, "threads": t})
        for t in (2, 1) for n in (1_000, 10_000) for engine in ("impl", "torch")
    ])
    assert [row["params"]["threads"] for row in by_threads(rows)] == [1, 1, 2, 2]
    steps = scaling(rows)
    assert [(s["threads"], s["growth"]["impl"]) for s in steps] == [(2, pytest.approx(10)),
                                                                     (1, pytest.approx(10))]
    assert format_scaling(steps[1:]).startswith("W1 [cpu, 1 thread] time growth N=1e3 -> N=1e4: impl 10.00x")


@pytest.mark.parametrize(("text", "expected"),
                         [("1,2", (1, 2)), ("2", (2,)), ("0", (0,)), ("1, 1,4", (1, 4))])
def test_thread_counts(text: str, expected: tuple) -> None:
    assert thread_counts(text) == expected


@pytest.mark.parametrize("text", ["", "0,1", "-1", "a"])
def test_thread_counts_refused(text: str) -> None:
    with pytest.raises(ValueError):
        thread_counts(text)


def test_session_prints_the_table_saves_rows_and_skips_impl_failures(pytester, monkeypatch) -> None:
    """The conftest end to end on fake workloads: each engine timed, the ratio table printed, the
    JSON written; impl's failure is a skip naming the error, torch's a failure."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # else pytest-benchmark disables itself
    pytester.makeconftest('pytest_plugins = ["benchmarks.conftest"]')
    pytester.makepyfile(test_fake=FAKE_BENCHMARKS)
    out = pytester.path / "bench.json"
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "--bench-threads", "0",
                                "--bench-json", str(out), "-rs")
    result.assert_outcomes(passed=2, skipped=1, failed=1)
    result.stdout.fnmatch_lines([
        "*impl vs torch: medians and ratios*",
        "fake sum *cpu*x*",
        "*impl cannot run fake broken yet: AttributeError: 'Tensor' object has no attribute 'frobnicate'",
    ])
    doc = json.loads(out.read_text())
    (row,) = doc["results"]
    assert row["name"] == "fake sum" and row["params"] == {"n": 100}
    assert row["impl"] > 0 and row["torch"] > 0 and row["ratio"] == pytest.approx(row["impl"] / row["torch"])
    assert {"machine", "date", "torch", "numpy", "threads"} <= set(doc)


def test_every_thread_setting_times_every_workload(pytester, monkeypatch) -> None:
    """``--bench-threads 1,2``: each workload timed under each setting, a row (and ratio) per setting,
    named with its thread count, the settings in the document."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makeconftest('pytest_plugins = ["benchmarks.conftest"]')
    pytester.makepyfile(test_fake=FAKE_BENCHMARKS)
    out = pytester.path / "bench.json"
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "--bench-threads", "1,2",
                                "--bench-json", str(out), "-k", "test_sum")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["fake sum (1 thread) *cpu*x*", "fake sum (2 threads) *cpu*x*"])
    doc = json.loads(out.read_text())
    assert [(row["name"], row["params"]) for row in doc["results"]] == [
        ("fake sum (1 thread)", {"n": 100, "threads": 1}), ("fake sum (2 threads)", {"n": 100, "threads": 2})]
    assert doc["threads"] == [1, 2] and all(row["ratio"] > 0 for row in doc["results"])
