"""The optional `statement` of faults and boundary attempts leaves older records alone."""

from __future__ import annotations

from kaudit.gateway._events import BoundaryAttempt, InjectedFault


def test_absent_statement_is_not_dumped_and_a_present_one_round_trips() -> None:
    """Fails if a tool call's fault dumps `statement: null`: every record written before
    the field existed would then hash differently when read back and re-dumped."""
    tool = InjectedFault(call=0, call_id="c", tool="t", kind="fail_before_commit", committed=False)
    assert "statement" not in tool.model_dump(mode="json")
    wire = InjectedFault.model_validate(
        tool.model_dump() | {"tool": "sql", "statement": "INSERT INTO t VALUES (1); COMMIT"}
    )
    assert InjectedFault.model_validate(wire.model_dump(mode="json")) == wire
    refused = BoundaryAttempt(call=1, call_id="c", tool="sql", table="t", reason="r")
    assert "statement" not in refused.model_dump(mode="json")
    assert BoundaryAttempt(**refused.model_dump(), statement="DELETE FROM t").statement
