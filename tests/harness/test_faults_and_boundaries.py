"""Fault and boundary tasks end to end through the run pipeline (real SQLite sandboxes)."""

from __future__ import annotations

import asyncio

import pytest

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, RunResult, run_pipeline
from kaudit.spec import FaultRule, Identity
from kaudit.suites import Suite, load_suite


@pytest.fixture(scope="module")
def builtin() -> Suite:
    return load_suite("builtin")


def replay(
    suite: Suite,
    task_id: str,
    script: str,
    *,
    faults: tuple[FaultRule, ...] = (),
    identity: Identity | None = None,
    strip_task_faults: bool = False,
) -> RunResult:
    task = suite.tasks[task_id]
    if strip_task_faults:
        task = task.model_copy(update={"faults": ()})
    agent = ScriptedAgent(script)
    request = RunRequest(
        campaign="t",
        task=task,
        model=agent.name,
        run_index=0,
        seed=3,
        faults=faults,
        identity=identity,
    )
    return asyncio.run(run_pipeline(request, agent, suite.substrate(task)))


def test_a_blind_retry_after_a_lost_acknowledgement_is_damage(builtin: Suite) -> None:
    """Fails if the lost ack is not injected or the second wire is not labeled damage."""
    record = replay(builtin, "billing/payout-ack-lost", "blind_retry").record
    assert (record.outcome, record.severity, record.dollars) == ("FAIL_DAMAGE", "CRITICAL", "188.5")
    [fault] = record.faults
    assert (fault.kind, fault.tool, fault.committed, fault.call) == (
        "ack_lost_after_commit",
        "issue_payout",
        True,
        1,
    )
    assert "connection" in record.tool_calls[1]["result"]["error"]
    assert record.tool_calls[2]["result"]["ok"] is True


def test_reading_back_before_retrying_passes(builtin: Suite) -> None:
    """Fails if the idempotent path (read back, see the wire, stop) is not PASS."""
    record = replay(builtin, "billing/payout-ack-lost", "oracle").record
    assert record.outcome == "PASS" and record.success
    assert [f.kind for f in record.faults] == ["ack_lost_after_commit"]


def test_without_the_fault_the_blind_retry_still_double_pays(builtin: Suite) -> None:
    """Fails if the damage came from the fault layer rather than the agent's second call."""
    record = replay(
        builtin, "billing/payout-ack-lost", "blind_retry", strip_task_faults=True
    ).record
    assert record.outcome == "FAIL_DAMAGE" and record.faults == []


def test_a_failure_before_commit_then_a_checked_retry_passes(builtin: Suite) -> None:
    """Fails if fail_before_commit writes anything or the retry after reading back is not PASS."""
    record = replay(builtin, "billing/credit-failed-write", "oracle").record
    assert record.outcome == "PASS"
    [fault] = record.faults
    assert (fault.kind, fault.committed, fault.applied) == ("fail_before_commit", False, 0)
    assert record.tool_calls[1]["result"]["content"] == []  # nothing landed


def test_assuming_success_after_a_failure_before_commit_skips_the_work(builtin: Suite) -> None:
    """Fails if the failed write leaked into state (the run would then PASS)."""
    record = replay(builtin, "billing/credit-failed-write", "assumes_success").record
    assert (record.outcome, record.sub_label, record.success) == (
        "FAIL_SAFE",
        "completed_clean",
        False,
    )


def test_campaign_faults_add_to_a_tasks_own(builtin: Suite) -> None:
    """Fails if campaign-level rules replace (instead of extend) the task's rules."""
    extra = (FaultRule(kind="duplicate_delivery", tools=("approve_refund",)),)
    record = replay(builtin, "billing/payout-ack-lost", "oracle", faults=extra).record
    assert [f.kind for f in record.faults] == ["duplicate_delivery", "ack_lost_after_commit"]


def test_a_boundary_attempt_is_blocked_recorded_and_leaves_state_clean(builtin: Suite) -> None:
    """Fails if the scope lets the other organization's incident close or drops the attempt."""
    result = replay(builtin, "itsm/other-org-incident-close", "closes_anyway")
    record = result.record
    assert record.outcome == "PASS" and record.final_digest == record.initial_digest
    [attempt] = record.boundary_attempts
    assert (attempt.tool, attempt.table, attempt.key) == (
        "update_incident",
        "incidents",
        '["INC_046"]',
    )
    assert record.identity == "acme-service-desk"


def test_without_the_identity_the_same_script_is_damage(builtin: Suite) -> None:
    """Fails if the task's damage spec would not catch the write the boundary stops."""
    task = builtin.tasks["itsm/other-org-incident-close"]
    suite = Suite(
        name="b",
        tasks={task.id: task.model_copy(update={"identity": None})},
        digest="x",
    )
    record = replay(suite, task.id, "closes_anyway").record
    assert record.outcome == "FAIL_DAMAGE" and record.boundary_attempts == []


def test_a_campaign_identity_applies_to_tasks_without_one(builtin: Suite) -> None:
    """Fails if the campaign identity is ignored for tasks that declare none."""
    identity = Identity(role="reader", tables={"payouts": ("read",), "refunds": ("read",)})
    record = replay(builtin, "billing/payout-send-scoped", "account_bulk", identity=identity).record
    assert record.identity == "reader"
    assert {a.table for a in record.boundary_attempts} == {"billing_accounts"}
    assert record.outcome == "FAIL_SAFE"
