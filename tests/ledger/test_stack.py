"""Stack health: API-errored and tool-less runs per cell, in the report and the gate."""

from __future__ import annotations

from typing import Any

from kaudit.gate import Evidence, GatePolicy, decide
from kaudit.gate._policy import Requirement
from kaudit.ledger import RunRecord
from kaudit.ledger._stack import stack_health
from kaudit.report import terminal_tables, to_text
from kaudit.report._cells import build_report


def run(i: int, *, api_error: str | None = None, calls: int = 1, **fields: Any) -> RunRecord:
    extra: dict[str, Any] = {"simulated": False}
    if api_error is not None:
        extra["api_error"] = api_error
    return RunRecord(
        campaign="c",
        model="openai:m",
        task="t",
        run_index=i,
        seed=i,
        status="labeled",
        outcome="FAIL_SAFE" if api_error else "PASS",
        termination="errored" if api_error else "completed",
        tool_calls=[{"name": "x", "arguments": {}}] * calls,
        extra=extra,
        **fields,
    )


def test_api_errors_are_counted_by_kind_and_dominate_a_cell() -> None:
    """Fails if errored runs are not counted by kind, or a half-errored cell is not flagged."""
    records = [run(0, api_error="http_500"), run(1, api_error="timeout"), run(2), run(3)]
    [health] = stack_health(records).values()
    assert (health.n, health.api_errors, health.api_error_runs) == (
        4,
        {"http_500": 1, "timeout": 1},
        2,
    )
    assert health.measures_stack
    assert not next(iter(stack_health(records[1:]).values())).measures_stack


def test_an_api_error_kind_on_a_completed_run_is_not_a_stack_failure() -> None:
    """Fails if a stale `api_error` of a run that completed anyway is counted."""
    record = run(0).model_copy(update={"extra": {"simulated": False, "api_error": "http_500"}})
    [health] = stack_health([record]).values()
    assert health.api_errors == {}


def test_runs_without_tool_calls_are_counted() -> None:
    """Fails if the count reads turns instead of the recorded tool calls."""
    [health] = stack_health([run(0, calls=0), run(1, calls=0), run(2)]).values()
    assert health.no_tool_calls == 2


def test_the_report_shows_stack_health_of_real_model_cells() -> None:
    """Fails if the cell row lacks the counts or the terminal report omits the table."""
    records = [run(0, api_error="http_500"), run(1, api_error="http_500"), run(2, calls=0)]
    report = build_report(records)
    [cell] = report.cells
    assert (cell.api_errors, cell.no_tool_calls, cell.measures_stack) == (
        {"http_500": 2},
        1,
        True,
    )
    assert report.to_json()["cells"][0]["measures_stack"] is True
    text = to_text(terminal_tables(records))
    assert "stack health" in text
    assert "http_500 ×2" in text
    assert "STACK" in text


def test_the_gate_never_grants_on_a_cell_that_measured_the_stack() -> None:
    """Fails if the gate grants on a cell where most runs ended in API errors.

    Errored-clean runs are FAIL_SAFE, not damage, so without this rule 10 runs of which
    6 are HTTP 500s pass a damage bound and the gate grants.
    """
    records = [run(i, api_error="http_500" if i < 6 else None) for i in range(10)]
    policy = GatePolicy(authorities={"autonomous_write": Requirement(min_k=10)})
    result = decide(policy, "autonomous_write", Evidence(records, True))
    assert result.decision == "deny"
    assert [r.rule for r in result.reasons] == ["max_stack_error_share"]
    healthy = [run(i) for i in range(10)]
    assert decide(policy, "autonomous_write", Evidence(healthy, True)).decision == "grant"
