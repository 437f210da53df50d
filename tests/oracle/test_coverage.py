"""The argument coverage (oracle.coverage): targets derived from torch's signatures, the items a
program exercises (from its steps and what the reference run's calls received), their way
through the plugin into results.json and the report."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import oracle.rules
from oracle import coverage
from oracle.differential import check, recording
from oracle.program import CallModule, Leaf, Module, Op, Program, Ref
from oracle.reference import reference
from oracle.results import ConformanceResult, build_results
from oracle.rules import Rule

pytest_plugins = "pytester"
TORCH = reference()


def items(*clauses: list[coverage.Clause]) -> set[str]:
    return set(coverage.Targets(*clauses).items())


def exercised(targets: coverage.Targets, program: Program) -> set[str]:
    """What ``program`` exercised, measured as check() measures it (on the reference's run)."""
    seen: dict = {}
    trace = TORCH.trace(program, seen=seen)
    refused = {event["step"] for event in trace.events if event["kind"] == "error"}
    return targets.exercised(program, seen, refused)


# --------------------------------------------------------------------------- derived targets


def test_a_loss_has_every_keyword_with_its_classes() -> None:
    assert items(coverage.keywords("nn.CrossEntropyLoss")) == {
        "nn.CrossEntropyLoss(weight): None", "nn.CrossEntropyLoss(weight): given",
        "nn.CrossEntropyLoss(ignore_index): default", "nn.CrossEntropyLoss(ignore_index): other",
        "nn.CrossEntropyLoss(reduction): mean", "nn.CrossEntropyLoss(reduction): sum",
        "nn.CrossEntropyLoss(reduction): none",
        "nn.CrossEntropyLoss(label_smoothing): default", "nn.CrossEntropyLoss(label_smoothing): other",
    }  # size_average and reduce: deprecated (coverage.EXCLUDED)


def test_an_optimiser_has_its_options_but_the_kernel_choices() -> None:
    arguments = {clause.argument for clause in coverage.keywords("optim.Adam")}
    assert arguments == {
        "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay"
    }
    assert coverage.excluded("optim.Adam", "fused") and coverage.excluded("optim.SGD", "foreach")


def test_an_op_has_the_arguments_of_its_aten_overloads() -> None:
    by_argument = {clause.argument: clause.classes for clause in coverage.keywords("clamp", "sort", "div")}
    assert by_argument["min"] == ("None", "a number", "a tensor")  # clamp.Tensor and clamp (Scalar)
    assert by_argument["stable"] == ("None", "True", "False")
    assert by_argument["descending"] == ("True", "False")
    assert by_argument["rounding_mode"] == ("None", "trunc", "floor")
    assert not coverage.keywords("mm")  # mm.dtype (out_dtype) has no CPU kernel
    assert [c.argument for c in coverage.keywords("__add__")] == ["other"]  # an operator has no alpha
    assert not coverage.keywords("__radd__")  # a reflected operator takes a number
    assert not [c for c in coverage.keywords("copy_") if c.argument == "other"]  # TorchScript's copy_.int


def test_python_apis_take_their_signatures() -> None:
    assert items(coverage.keywords("Tensor.backward", only=("retain_graph", "create_graph"))) == {
        "Tensor.backward(retain_graph): None", "Tensor.backward(retain_graph): True",
        "Tensor.backward(retain_graph): False", "Tensor.backward(create_graph): True",
        "Tensor.backward(create_graph): False"}
    assert items(coverage.keywords("Module.register_forward_hook")) == {
        f"Module.register_forward_hook({flag}): {value}"
        for flag in ("prepend", "with_kwargs", "always_call") for value in ("True", "False")}


def test_excluded_items_must_be_targets() -> None:
    why = {"nn.Dropout(p): other": "why"}
    targets = coverage.Targets(coverage.keywords("nn.Dropout"), excluded=why)
    assert "nn.Dropout(p): other" not in targets.items() and targets.excluded == why
    with pytest.raises(ValueError, match="no targets"):
        coverage.Targets(coverage.keywords("nn.Dropout"), excluded={"nn.Dropout(q): other": "why"})


# --------------------------------------------------------------------------- measured on programs

def ignored(call: coverage.Call) -> Any:
    return call.tensor("target") == call.arguments["ignore_index"]


LOSS_TARGETS = coverage.Targets(
    coverage.keywords("nn.CrossEntropyLoss"),
    coverage.clause("nn.CrossEntropyLoss", "ignore_index", {
        "an ignored target": lambda call: bool(ignored(call).any()),
        "all targets ignored": lambda call: bool(ignored(call).all()),
    }),
)


def loss_program(targets: list[int], **kwargs: object) -> Program:
    return Program([
        Leaf("x", [[0.5, 1.0, -1.0], [0.0, 2.0, 1.0]], requires_grad=True),
        Leaf("y", targets, "int64"),
        Module("m", "CrossEntropyLoss", kwargs=kwargs),
        CallModule("t", "m", ["x", "y"]),
    ])


def test_a_loss_call_exercises_its_keywords_and_its_targets_classes() -> None:
    found = exercised(LOSS_TARGETS, loss_program([1, 1], ignore_index=1, reduction="sum"))
    assert found == {
        "nn.CrossEntropyLoss(weight): None", "nn.CrossEntropyLoss(ignore_index): other",
        "nn.CrossEntropyLoss(reduction): sum", "nn.CrossEntropyLoss(label_smoothing): default",
        "nn.CrossEntropyLoss(ignore_index): an ignored target",
        "nn.CrossEntropyLoss(ignore_index): all targets ignored",
    }
    some = exercised(LOSS_TARGETS, loss_program([1, 0], ignore_index=1))
    assert "nn.CrossEntropyLoss(ignore_index): an ignored target" in some
    assert "nn.CrossEntropyLoss(ignore_index): all targets ignored" not in some
    assert "nn.CrossEntropyLoss(reduction): mean" in some  # absent: the default


def test_edge_values_count_where_a_gradient_flows() -> None:
    targets = coverage.Targets(coverage.edges("relu", "input", "0", "-0.0", "NaN", "inf"))
    values = [0.0, -0.0, 2.0, -math.inf]

    def relu_of(requires_grad: bool) -> Program:
        return Program([Leaf("x", values, requires_grad=requires_grad), Op("y", "relu", [Ref("x")])])

    assert exercised(targets, relu_of(True)) == {"relu(input): 0", "relu(input): -0.0"}
    assert exercised(targets, relu_of(False)) == set()  # no gradient: no gradient edge
    # the values the call received, not the leaf's: an in-place write in between counts
    written = Program([Leaf("x", values, requires_grad=True), Op("c", "mul", [Ref("x"), 1.0]),
                       Op("w", "fill_", [Ref("c"), math.nan]), Op("y", "relu", [Ref("c")])])
    assert exercised(targets, written) == {"relu(input): NaN"}


def test_positional_arguments_are_bound_by_torchs_overloads() -> None:
    targets = coverage.Targets(coverage.keywords("sum", "max"))
    program = Program([Leaf("x", [[1.0, 2.0]]), Op("s", "sum", [Ref("x"), 1], {"keepdim": True}),
                       Op("m", "max", [Ref("x"), 0]), Op("n", "max", [Ref("x"), Ref("x")])])
    found = exercised(targets, program)
    assert {"sum(dim): given", "sum(keepdim): True", "sum(dtype): None", "max(dim): given",
            "max(other): given", "max(other): absent", "max(dim): absent"} <= found
    assert "max(keepdim): True" not in found


def test_a_refused_call_exercises_nothing() -> None:
    targets = coverage.Targets(coverage.keywords("sum"))
    refused = Program([Leaf("x", [1.0, 2.0]), Op("s", "sum", [Ref("x"), 3], {"keepdim": True})])
    assert exercised(targets, refused) == set()


def test_the_reference_trace_is_the_same_when_it_records_calls() -> None:
    program = loss_program([1, 0], ignore_index=1)
    seen: dict = {}
    assert TORCH.trace(program, seen=seen).to_dict() == TORCH.trace(program).to_dict()
    assert set(seen) == {3}  # the loss call, with its input and target
    args, _ = seen[3]
    assert args[0].requires_grad and args[1].values.tolist() == [1, 0]


def test_check_hands_a_log_the_items_its_programs_exercised() -> None:
    with recording(targets=LOSS_TARGETS) as log:
        check(loss_program([1, 1], ignore_index=1), TORCH, TORCH)
    assert "nn.CrossEntropyLoss(ignore_index): all targets ignored" in log.covered
    assert log.record()["covered"] == sorted(log.covered)
    with recording() as plain:
        check(loss_program([1, 1]), TORCH, TORCH)
    assert "covered" not in plain.record()


# --------------------------------------------------------------------------- results.json


class Report:
    """A passed call-phase report, as results.py reads it."""

    when, failed, skipped, duration, longrepr = "call", False, False, 0.1, None


def test_results_give_each_rule_its_targets_covered_and_uncovered() -> None:
    first, second = ConformanceResult("t.py::test_a"), ConformanceResult("t.py::test_b")
    first.merge(Report(), {"rule": "OPS-001", "coverage_targets": ["a(x): 0", "a(x): 1", "b(y): True"],
                           "coverage_excluded": {"b(y): False": "why"}, "covered": ["a(x): 0"]})
    second.merge(Report(), {"rule": "OPS-001", "covered": ["b(y): True", "z(q): 2"]})
    results = build_results([first, second], {})
    [rule] = [r for r in results["rules"] if r["id"] == "OPS-001"]
    assert rule["coverage"] == {"targets": 3, "covered": 2, "uncovered": ["a(x): 1"],
                                "excluded": {"b(y): False": "why"}}
    assert next(r for r in results["rules"] if r["id"] == "OPS-002")["coverage"] is None
    assert results["totals"]["coverage"] == {"rules": 1, "targets": 3, "covered": 2, "uncovered": 1,
                                             "rules_uncovered": ["OPS-001"]}
    family = next(f for f in results["families"] if f["family"] == "op values and gradients")
    assert family["coverage"]["uncovered"] == 1
    assert "_covered" not in json.dumps(results)  # per rule only, not per test


# --------------------------------------------------------------------------- through the plugin

SUITE = '''
import pytest
from oracle import coverage
from oracle.differential import check
from oracle.program import Leaf, Op, Program, Ref

COVERAGE = {"CCC-001": coverage.Targets(coverage.keywords("sum", only=("keepdim",)),
                                        coverage.edges("relu", "input", "0", "NaN"))}


@pytest.mark.rule("CCC-001")
@pytest.mark.parametrize("keepdim", [True])
def test_sums(keepdim, backend, reference):
    program = Program([Leaf("x", [0.0, 1.0], requires_grad=True), Op("y", "relu", [Ref("x")]),
                       Op("s", "sum", [Ref("y"), 0], {"keepdim": keepdim})])
    check(program, backend, reference)
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_uncovered_items_reach_results_json(
    workers: list[str], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = Rule("CCC-001", "c", "a rule", "seed 001")
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: {"CCC-001": rule})
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "oracle.plugin", "--backend", "torch", "--isolation", "none", *workers)
    result.assert_outcomes(passed=1)
    results = json.loads((pytester.path / "reports" / "results.json").read_text())
    [rule] = results["rules"]
    assert rule["coverage"] == {"targets": 4, "covered": 2, "excluded": {},
                                "uncovered": ["relu(input): NaN", "sum(keepdim): False"]}
    line = "*argument coverage: 2 of 4 target items exercised; 2 uncovered, in CCC-001*"
    result.stdout.fnmatch_lines([line])
