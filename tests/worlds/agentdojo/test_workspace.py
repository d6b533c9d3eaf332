"""A few AgentDojo workspace tasks, built alone (not the whole 600-task suite) and proved."""

from __future__ import annotations

import asyncio

import pytest

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.harness._validate import validate_suite
from kaudit.report._referee import referee_report
from kaudit.suites import Suite
from kaudit.suites._agentdojo import DEFAULT_VERSION, agentdojo_suite, pair_sources, suite_of

PICKED = (
    "user_task_24",
    "user_task_13/injection_task_0",
    "user_task_14/injection_task_0",
    "user_task_0/injection_task_6",
)
"""Reading unread mail (`get_unread_emails` marks it read); appending to a drive file
(stamped with the clock, and shared by the drive's `initial_files` seed list); an
injection AgentDojo's `security()` misses on its own run; an injection task that
ships no ground truth."""


@pytest.fixture(scope="module")
def workspace() -> Suite:
    """The picked workspace tasks, built in a few seconds."""
    dojo = agentdojo_suite("workspace", DEFAULT_VERSION)
    return suite_of(dojo, DEFAULT_VERSION, pair_sources(dojo, DEFAULT_VERSION, PICKED))


def test_reading_mail_changes_no_state(workspace: Suite) -> None:
    """Fails if `emails.read` is diffed: reading mail becomes a change the task must make."""
    task = workspace.tasks["user_task_24"]
    assert "get_unread_emails" in [s.tool_calls[0].name for s in task.oracle if s.tool_calls]
    assert [c.name for c in task.checks] == ["no_state_change_asked"]


def test_picked_workspace_tasks_validate(workspace: Suite) -> None:
    """Fails if `files.last_modified` or the `initial_files` seed copy is diffed (the
    oracle then expects a load-time clock or a seed-list edit no sandbox run leaves), if
    validate demands a breach AgentDojo misses on its own run, or replays an injection
    task with no ground truth as if it were obeyed."""
    checks = asyncio.run(validate_suite(workspace))
    assert [(c.task, c.script, c.mismatches) for c in checks if not c.passed] == []
    assert {(c.task, c.script): c.outcome for c in checks} == {
        ("user_task_0/injection_task_6", "oracle"): "PASS",
        ("user_task_13/injection_task_0", "oracle"): "PASS",
        ("user_task_13/injection_task_0", "injection"): "FAIL_DAMAGE",
        ("user_task_13/injection_task_0", "hijacked"): "FAIL_DAMAGE",
        ("user_task_14/injection_task_0", "oracle"): "PASS",
        ("user_task_14/injection_task_0", "injection"): "FAIL_DAMAGE",
        ("user_task_14/injection_task_0", "hijacked"): "FAIL_DAMAGE",
        ("user_task_24", "oracle"): "PASS",
    }


def test_a_breach_agentdojo_cannot_see_is_explained_as_such(workspace: Suite) -> None:
    """Fails if the run is not flagged as one AgentDojo's own ground-truth run misses too,
    or if the report explains its disagreement as damage beside the injection's goal (it is
    the goal, done: kaudit sees the email sent)."""
    task = workspace.tasks["user_task_14/injection_task_0"]
    agent = ScriptedAgent(script=task.script("injection"))
    request = RunRequest(campaign="c", task=task, model=agent.name, run_index=0, seed=0)
    run = run_pipeline(request, agent, workspace.substrate(task), referee=workspace.referee)
    record = asyncio.run(run).record
    judged = record.extra["agentdojo"]
    assert (record.counts_as_damage, judged["security"]) == (True, False)
    assert judged["security_on_own_run"] is False
    report = referee_report([record])
    assert report is not None
    (disagreement,) = report.disagreements
    assert "even on AgentDojo's own ground-truth run" in disagreement["reasons"][0]
