"""The run phases can be replaced and composed: a custom driver, the agent's own facts."""

from __future__ import annotations

import asyncio
from typing import Any

from kaudit.agents import AgentDefaults, Episode, RunFacts, ScriptedAgent, Usage
from kaudit.harness import RunRequest, Transcript, run_pipeline
from kaudit.harness._gateway import RunGateway
from kaudit.harness._validate import check_script
from kaudit.label import final_state_digest
from kaudit.label.diff import diff_images
from kaudit.spec import Expected
from kaudit.spec._task import Check
from kaudit.suites import Suite, load_suite


class ExternalDriver:
    """Stands in for an external agent (e.g. over MCP) calling the run's gateway directly."""

    async def drive(self, episode: Episode, gateway: RunGateway) -> Transcript:
        gateway.gateway.call("x1", "update_account", {"account_id": "ACC_004", "status": "closed"})
        return Transcript(final_message="done by an external agent", steps=1)


class FactfulAgent(AgentDefaults):
    """Names the model and keeps per-run totals, but never drives (the driver does)."""

    simulated = False

    def __init__(self) -> None:
        self.name = "external"
        self.asked: list[str] = []

    def start(self, episode: Episode) -> Any:
        raise AssertionError("the external driver replaces the agent loop")

    def describe(self) -> dict[str, Any]:
        return {"kind": "external"}

    def sampling(self) -> dict[str, Any] | None:
        return {"temperature": 0.3}

    def run_facts(self, run_id: str) -> RunFacts | None:
        self.asked.append(run_id)
        return RunFacts(usage=Usage(11, 5, cost_usd=0.25, retries=1, api_calls=3))


def test_a_custom_driver_replaces_the_loop_and_goes_through_the_gateway(mini_suite: Suite) -> None:
    """Fails if the pipeline bypasses the driver, or calls made by it are not recorded."""
    task = mini_suite.tasks["demo/close-account"]
    agent = FactfulAgent()
    request = RunRequest(campaign="c", task=task, model=agent.name, run_index=2, seed=5)
    result = asyncio.run(
        run_pipeline(request, agent, mini_suite.substrate(task), driver=ExternalDriver())
    )
    record = result.record
    assert [c["name"] for c in record.tool_calls] == ["update_account"]
    assert record.final_message == "done by an external agent" and record.steps == 1
    assert record.status == "labeled" and record.final_digest != record.initial_digest
    assert agent.asked == ["c/external/demo/close-account/2"]
    assert (record.input_tokens, record.output_tokens, record.retries) == (11, 5, 1)
    assert record.extra == {
        "simulated": False,
        "sampling": {"temperature": 0.3},
        "api_calls": 3,
        "model_ms": 0.0,
    }


def test_validate_checks_the_declared_boundary_attempts() -> None:
    """Fails if a script's declared boundary_attempts is not compared with the run's."""
    suite = load_suite("builtin")
    task = suite.tasks["billing/self-approve-refund"]
    script = task.script("approves_own")
    wrong = script.model_copy(update={"expected": Expected(outcome="PASS", boundary_attempts=0)})
    assert asyncio.run(check_script(suite, task, script)).passed
    found = asyncio.run(check_script(suite, task, wrong)).mismatches
    assert found == ("boundary_attempts: expected 0, got 1",)


class Crashes(FactfulAgent):
    """An agent whose session hits a harness bug (not an AgentError) after spending tokens."""

    def start(self, episode: Episode) -> Any:
        return self

    async def next_turn(self, observations: Any) -> Any:
        raise RuntimeError("bug in the harness")


def test_a_harness_failure_is_invalid_but_keeps_what_was_spent(mini_suite: Suite) -> None:
    """Fails if a crashed run is scored, or its spent tokens and dollars are dropped."""
    from kaudit.harness import RunJob, RunWork

    agent = Crashes()
    work = RunWork(mini_suite, {agent.name: agent}, dict(mini_suite.tasks))
    job = RunJob("c", agent.name, "demo/close-account", 0, 9)
    record = asyncio.run(work(job, 0)).record
    assert record.status == "invalid" and "RuntimeError: bug in the harness" in (
        record.invalid_reason or ""
    )
    assert (record.input_tokens, record.cost_usd, record.retries) == (11, 0.25, 1)
    assert agent.asked == ["c/external/demo/close-account/0"]


def test_a_harness_failure_record_carries_what_the_campaign_knows_of_the_run(
    mini_suite: Suite,
) -> None:
    """Fails if the INVALID record of a crashed run is built without the request's
    attempt, task and world digests or stopping rule (before, a patch applied them to
    every record after it was built; now `invalid_result` must take them from the request,
    as `record` does). Tried by hand: dropping `attempt` from `RunRequest.recorded`."""
    from kaudit.harness import RunJob, RunWork
    from kaudit.harness._conditions import run_digest
    from kaudit.harness._sequential import fixed_rule

    agent = Crashes()
    task = mini_suite.tasks["demo/close-account"]
    rule = fixed_rule(4)
    work = RunWork(mini_suite, {agent.name: agent}, dict(mini_suite.tasks), stopping_rule=rule)
    job = RunJob("c", agent.name, task.id, 3, 9, attempt=2)
    record = asyncio.run(work(job, 1)).record
    assert (record.status, record.run_index, record.attempt, record.restarted) == (
        "invalid",
        3,
        2,
        1,
    )
    assert record.task_digest == run_digest(task, (), None)
    assert record.world_digest == mini_suite.substrate(task).template_digest
    assert record.stopping_rule == rule


def test_a_kept_dump_is_the_committed_final_state_and_matches_its_digest(
    mini_suite: Suite,
) -> None:
    """Fails if a pooled run's kept image were serialized inside its open transaction
    (SQLite writes a memory database's bytes at commit: the image would be the template),
    or if the record's final digest were not the state digest of that image."""
    task = mini_suite.tasks["demo/close-account"]
    substrate = mini_suite.substrate(task)
    agent = ScriptedAgent("close_both")
    for run_index in range(2):  # the second run is seeded from the pool
        request = RunRequest(campaign="c", task=task, model=agent.name, run_index=run_index, seed=1)
        result = asyncio.run(run_pipeline(request, agent, substrate, keep_dump=True))
        assert result.final_image is not None and result.record.outcome == "FAIL_DAMAGE"
        image = result.final_image
        assert final_state_digest(substrate.template.image, image) == result.record.final_digest
        changed = diff_images(substrate.template.image, image)
        assert [(c.key, c.after and c.after["status"]) for c in changed] == [
            ((("id", "ACC_002"),), "closed"),
            ((("id", "ACC_004"),), "closed"),
        ]


def test_a_run_whose_check_is_denied_still_records_its_final_digest(mini_suite: Suite) -> None:
    """Fails if the label phase dropped the state digest when the labeler refused the
    task's checks (the run is INVALID, but its final state is still known)."""
    task = mini_suite.tasks["demo/close-account"].model_copy(
        update={"checks": (Check(name="forge", sql="DELETE FROM account RETURNING 1", expected=1),)}
    )
    agent = ScriptedAgent("close_both")
    request = RunRequest(campaign="c", task=task, model=agent.name, run_index=0, seed=1)
    substrate = mini_suite.substrate(task)
    result = asyncio.run(run_pipeline(request, agent, substrate, keep_dump=True))
    assert result.record.status == "invalid" and "forge" in (result.record.invalid_reason or "")
    assert result.final_image is not None
    assert result.record.final_digest == final_state_digest(
        substrate.template.image, result.final_image
    )
    assert result.record.final_digest != result.record.initial_digest
