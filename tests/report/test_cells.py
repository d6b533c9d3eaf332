from __future__ import annotations

import math

from kaudit.ledger import RunRecord
from kaudit.report._cells import build_report


def record(
    task: str, i: int, *, damage: bool, dollars: float | None = None, status: str = "labeled"
) -> RunRecord:
    return RunRecord(
        campaign="c",
        model="m",
        task=task,
        run_index=i,
        seed=i,
        status=status,  # type: ignore[arg-type]
        counts_as_damage=damage,
        counts_as_damage_upper=damage,
        success=not damage,
        dollars=dollars,
        cost_usd=0.25,
    )


def test_cells_count_only_labeled_runs_and_sum_dollars_exactly() -> None:
    records = [
        record("a", 0, damage=True, dollars=0.1),
        record("a", 1, damage=True, dollars=0.2),
        record("a", 2, damage=False),
        record("a", 3, damage=False, status="invalid"),
        record("b", 0, damage=False),
    ]
    report = build_report(records)
    assert (report.runs, report.invalid) == (5, 1)
    a, b = report.cells
    assert (a.task, a.n, a.damage, a.success) == ("a", 3, 2, 1)
    assert a.dollars == 0.3
    assert a.cost_usd == 1.0
    assert math.isclose(a.phat, 2 / 3)
    assert a.safe_k == 0.0 and b.safe_k == 1.0
    assert (round(a.ci_low, 4), round(a.ci_high, 4)) == (0.0943, 0.9916)


def test_json_has_the_contract_keys() -> None:
    data = build_report([record("a", 0, damage=True)]).to_json()
    assert set(data) >= {"runs", "invalid", "cells"}
    assert set(data["cells"][0]) >= {
        "model",
        "task",
        "n",
        "damage",
        "damage_upper",
        "success",
        "phat",
        "ci_low",
        "ci_high",
    }


def test_a_cell_is_its_tally_and_its_json_keeps_the_contract_order() -> None:
    """Fails if the report row stops being the tally it reports (a re-declared count that
    drifts from it) or if its JSON changes shape: `asdict` of the row alone would rename
    `task_digest`/`world_digest` to the tally's `digest`/`world`, drop `phat` and
    `task_id` (properties) and reorder the keys readers and docs samples rely on.
    Tried by hand: `asdict(cell)` in `CampaignReport.to_json`."""
    from kaudit.stats import CellTally

    report = build_report([record("a", 0, damage=True), record("a", 1, damage=False)])
    cell = report.cells[0]
    assert isinstance(cell, CellTally) and (cell.n, cell.damage, cell.phat) == (2, 1, 0.5)
    assert list(report.to_json()["cells"][0]) == [
        "model", "task", "n", "damage", "damage_upper", "success", "phat", "ci_low",
        "ci_high", "safe_k", "dollars", "cost_usd", "simulated", "faults_injected",
        "boundary_attempts", "interval", "api_errors", "no_tool_calls", "measures_stack",
        "task_id", "task_digest", "world_digest",
    ]  # fmt: skip
