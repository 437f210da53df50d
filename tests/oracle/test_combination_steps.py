"""Self-tests of what the combinations family (conformance/test_combinations.py) added: the
``assign_attr`` step (a tied parameter, a shared submodule), an optimiser over a module's
``parameters()``, and the pairwise covering rows its tests are parametrized by."""

from __future__ import annotations

from itertools import combinations, product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.test_combinations import (
    BACKWARD_FACTORS,
    BACKWARD_ROWS,
    GRAD_FACTORS,
    GRAD_ROWS,
    backward_loops,
    grad_loops,
    retained_across_steps,
    reused_modules,
    row_id,
    shared_trees,
)
from oracle.backends import load_backend
from oracle.differential import check
from oracle.interpreter import run
from oracle.pairwise import covering_rows, uncovered_pairs
from oracle.program import (
    AssignAttr,
    Backward,
    CallModule,
    Leaf,
    Module,
    Observe,
    ObserveModule,
    Op,
    Optimizer,
    OptimizerStep,
    Program,
    Ref,
)
from oracle.reference import reference
from oracle.render import render
from oracle.trace import normalise
from tests.oracle.test_module_steps import render_all
from tests.oracle.test_render import assert_script_reproduces, expected_output, run_script

TORCH = reference()

LINEAR = {"cls": "Linear", "args": [2, 2], "params": {"weight": [[1.0, -1.0], [0.5, 2.0]], "bias": [0.5, 0]}}
EMBEDDING = {"cls": "Embedding", "args": [4, 2], "params": {"weight": [[1, 0], [0, 1], [1, 1], [-1, 0.5]]}}
HEAD = {"cls": "Linear", "args": [2, 4], "params": {"weight": [[0.0, 0.0]] * 4, "bias": [0.0, 1.0, 2.0, 3.0]}}
TIED_AND_SHARED = Program(
    [
        Module("lm", "Sequential", children=[EMBEDDING, HEAD]),
        AssignAttr("lm_1", "weight", "lm_0.weight"),  # weight tying: head.weight = embedding.weight
        Module("net", "Sequential", children=[LINEAR, {"cls": "Tanh"}, LINEAR]),
        AssignAttr("net", "2", "net_0"),  # the same Linear at places 0 and 2
        ObserveModule("lm"),
        ObserveModule("net"),
        Optimizer("opt", "SGD", [], {"lr": 0.1, "momentum": 0.9}, module="lm"),
        Optimizer("twice", "SGD", ["net_0.weight", "net_0.bias", "net_0.weight"], {"lr": 0.1}),
        Leaf("i", [0, 2, 2], "int64"),
        CallModule("o", "lm", ["i"]),
        Op("s", "sum", [Ref("o")]),
        Leaf("x", [[1.0, 2.0]]),
        CallModule("p", "net", ["x"]),
        Op("ps", "sum", [Ref("p")]),
        Backward("s"),
        Backward("ps"),
        Observe("lm_0.weight"),
        Observe("lm_1.weight"),
        OptimizerStep("opt"),
        OptimizerStep("twice"),
        Observe("lm_1.weight"),
        Observe("net_0.weight"),
    ]
)


def test_the_new_steps_round_trip_through_json() -> None:
    assert Program.from_json(TIED_AND_SHARED.to_json()) == TIED_AND_SHARED


def test_assign_attr_binds_an_identifier_attribute_only() -> None:
    assert AssignAttr("head", "weight", "emb.weight").names_bound() == ["head.weight"]
    assert AssignAttr("head", "weight", "emb.weight").names_read() == ["head", "emb.weight"]
    assert AssignAttr("seq", "2", "seq_0").names_bound() == []
    assert Optimizer("o", "Adam", module="m").names_read() == ["m"]


@pytest.mark.parametrize("make", [
    lambda: AssignAttr("m", "a.b", "x"),
    lambda: AssignAttr("m", "", "x"),
    lambda: Optimizer("o", "SGD", ["m.weight"], module="m"),
])
def test_invalid_new_steps_are_refused(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_torch_lists_a_tied_parameter_once_and_keeps_both_keys() -> None:
    events = [e for e in run(TIED_AND_SHARED, TORCH).events if e["kind"] == "module"]
    assert [p[0] for p in events[0]["parameters"]] == ["0.weight", "1.bias"]
    assert events[0]["state_dict"] == ["0.weight", "1.weight", "1.bias"]
    assert [p[0] for p in events[1]["parameters"]] == ["0.weight", "0.bias"]
    assert events[1]["state_dict"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [m[0] for m in events[1]["training"]] == ["", "0", "1"]
    assert "setattr(net, '2', net_0)" in render(TIED_AND_SHARED)
    assert "torch.optim.SGD(lm.parameters(), lr=0.1, momentum=0.9)" in render(TIED_AND_SHARED)
    check(TIED_AND_SHARED, load_backend("impl"), TORCH)


def test_the_new_steps_render_as_the_reference_trace() -> None:
    assert_script_reproduces(TIED_AND_SHARED)


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.tuples(backward_loops(BACKWARD_ROWS[5], 5), grad_loops(GRAD_ROWS[9], 9),
                 shared_trees("embedding-head", True), shared_trees("module-list", False),
                 reused_modules("shared"), retained_across_steps("deep")))
def test_generated_combination_programs_render_as_the_reference_trace(batch: tuple[Program, ...]) -> None:
    """In one script (one torch start-up)."""
    done = run_script("\nprint('=====')\n".join(render_all(list(batch))))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout).split("=====\n") == [expected_output(p)[0] for p in batch]


@pytest.mark.parametrize("factors", [BACKWARD_FACTORS, GRAD_FACTORS], ids=["backward", "grad"])
def test_the_rows_cover_every_pair_of_options(factors: dict[str, tuple]) -> None:
    rows = covering_rows(factors)
    assert uncovered_pairs(factors, rows) == set()
    sizes = sorted(len(values) for values in factors.values())
    assert len(rows) <= 1.25 * sizes[-1] * sizes[-2]  # near the lower bound
    assert rows == covering_rows(factors)  # deterministic: the ci parametrization is stable
    assert len({row_id(row) for row in rows}) == len(rows)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=6))
def test_covering_rows_cover_all_pairs_of_any_factors(sizes: list[int]) -> None:
    factors = {f"f{k}": tuple(range(n)) for k, n in enumerate(sizes)}
    rows = covering_rows(factors)
    for a, b in combinations(factors, 2):
        assert {(r[a], r[b]) for r in rows} == set(product(factors[a], factors[b]))
    assert all(set(row) == set(factors) for row in rows)
