from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.ledger import RunRecord
from kaudit.report._cells import build_report
from kaudit.report._faults import exposure_summary
from kaudit.spec._faults import FAULT_KINDS


def record(i: int, outcome: str | None, kinds: list[str], attempts: int = 0) -> RunRecord:
    faults = [
        InjectedFault(call=n, call_id=str(n), tool="t", kind=kind, committed=True, applied=1)  # type: ignore[arg-type]
        for n, kind in enumerate(kinds)
    ]
    blocked = [
        BoundaryAttempt(call=n, call_id=str(n), tool="t", table="x", key=None, reason="r")
        for n in range(attempts)
    ]
    fields: dict[str, Any] = {"status": "labeled", "outcome": outcome, "success": True}
    if outcome is None:
        fields = {"status": "invalid"}
    return RunRecord(
        campaign="c",
        model="m",
        task="t",
        run_index=i,
        seed=i,
        faults=faults,
        boundary_attempts=blocked,
        **fields,
    )


def test_a_run_hit_twice_by_one_kind_counts_once_in_the_mix() -> None:
    """Fails if the outcome mix counts faults instead of runs, or INVALID runs as outcomes."""
    runs = [
        record(0, "FAIL_DAMAGE", ["ack_lost_after_commit", "ack_lost_after_commit"]),
        record(1, "PASS", ["ack_lost_after_commit", "duplicate_delivery"], attempts=2),
        record(2, None, ["ack_lost_after_commit"]),
        record(3, "PASS", []),
    ]
    summary = exposure_summary(runs)
    assert summary.faults == {"ack_lost_after_commit": 4, "duplicate_delivery": 1}
    assert summary.fault_outcomes == {
        "ack_lost_after_commit": {"PASS": 1, "FAIL_DAMAGE": 1, "INVALID": 1},
        "duplicate_delivery": {"PASS": 1},
    }
    assert (summary.boundary_attempts, summary.runs_with_boundary_attempts) == (2, 1)
    [cell] = build_report(runs).cells
    assert (cell.faults_injected, cell.boundary_attempts) == (5, 2)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["PASS", "FAIL_SAFE", "FAIL_DAMAGE", None]),
            st.lists(st.sampled_from(FAULT_KINDS), max_size=4),
        ),
        max_size=30,
    )
)
def test_fault_counts_add_up(runs: list[tuple[str | None, list[str]]]) -> None:
    """Fails if any injected fault is lost or any hit run missing from its kind's mix."""
    records = [record(i, outcome, kinds) for i, (outcome, kinds) in enumerate(runs)]
    summary = exposure_summary(records)
    assert sum(summary.faults.values()) == sum(len(kinds) for _, kinds in runs)
    for kind in FAULT_KINDS:
        hit = sum(kind in kinds for _, kinds in runs)
        assert sum(summary.fault_outcomes.get(kind, {}).values()) == hit


def test_version_1_records_read_with_exact_decimal_dollars() -> None:
    """Fails if a ledger written before records were typed can no longer be read."""
    old = (
        '{"version":1,"campaign":"c","model":"m","task":"t","run_index":0,"seed":1,'
        '"status":"labeled","outcome":"FAIL_DAMAGE","sub_label":"completed_damage",'
        '"severity":"HIGH","dollars":412.5,"counts_as_damage":true,"termination":"completed"}'
    )
    loaded = RunRecord.model_validate_json(old)
    assert loaded.dollars == "412.5" and str(loaded.damage_dollars) == "412.5"
    assert loaded.version == 1 and loaded.faults == [] and loaded.boundary_attempts == []
    assert RunRecord.model_validate_json(old.replace("412.5", "95")).dollars == "95"
