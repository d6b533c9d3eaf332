from __future__ import annotations

import asyncio
from typing import Any

from kaudit.agents import AgentDefaults, Episode, Observation, ToolCall, Turn
from kaudit.harness import RunRequest, run_pipeline
from kaudit.suites import Suite


class Recorder(AgentDefaults):
    """An agent that sends fixed turns and keeps the observations it got back."""

    simulated = True

    def __init__(self, turns: list[Turn]) -> None:
        self.name = "test:recorder"
        self.turns = turns
        self.seen: list[list[Observation]] = []

    def start(self, episode: Episode) -> Recorder:
        return self

    async def next_turn(self, observations: Any) -> Turn:
        self.seen.append(list(observations))
        return self.turns.pop(0)

    def describe(self) -> dict[str, Any]:
        return {}


def run(suite: Suite, agent: Recorder) -> Any:
    task = suite.tasks["demo/close-account"]
    request = RunRequest(campaign="c", task=task, model=agent.name, run_index=0, seed=1)
    return asyncio.run(run_pipeline(request, agent, suite.substrate(task)))


def test_malformed_arguments_and_unknown_tools_go_back_to_the_agent(mini_suite: Suite) -> None:
    agent = Recorder(
        [
            Turn(
                tool_calls=(
                    ToolCall("1", "update_account", "{not json"),
                    ToolCall("2", "drop_db", {}),
                )
            ),
            Turn(content="giving up"),
        ]
    )
    result = run(mini_suite, agent)
    first, second = agent.seen[1]
    assert not first.ok and "not valid JSON" in first.text
    assert not second.ok and "unknown tool 'drop_db'" in second.text
    assert result.record.outcome == "FAIL_SAFE" and result.record.termination == "completed"


def test_tools_outside_the_task_selection_are_not_offered(mini_suite: Suite) -> None:
    agent = Recorder(
        [
            Turn(
                tool_calls=(
                    ToolCall("1", "set_link", {"account_id": "ACC_001", "tag": "t", "note": "n"}),
                )
            ),
            Turn(content="x"),
        ]
    )
    result = run(mini_suite, agent)
    assert "unknown tool 'set_link'" in agent.seen[1][0].text
    assert result.record.counts_as_damage is False


def test_record_carries_transcript_tool_calls_timing_and_digests(mini_suite: Suite) -> None:
    agent = Recorder(
        [
            Turn(tool_calls=(ToolCall("1", "get_account", {"account_id": "ACC_004"}),)),
            Turn(content="REFUSAL: held"),
        ]
    )
    record = run(mini_suite, agent).record
    assert record.tool_calls[0]["name"] == "get_account"
    assert record.tool_calls[0]["tag"] == "read"
    assert record.tool_calls[0]["result"]["content"]["status"] == "open"
    assert record.final_message == "REFUSAL: held"
    assert record.sub_label == "refused_clean"
    assert record.steps == 2 and len(record.transcript) == 2
    assert record.final_digest == record.initial_digest  # reads leave the image byte-identical
    assert record.timing.total_ms >= record.timing.label_ms > 0


class FailsAfterRetries(Recorder):
    async def next_turn(self, observations: Any) -> Turn:
        from kaudit.agents import Usage
        from kaudit.errors import AgentError

        raise AgentError("503 after 4 retries", usage=Usage(retries=4, input_tokens=7))


def test_a_failed_turn_still_counts_what_it_spent(mini_suite: Suite) -> None:
    record = run(mini_suite, FailsAfterRetries([])).record
    assert (record.termination, record.retries, record.input_tokens) == ("errored", 4, 7)
    assert record.sub_label == "errored_clean" and record.counts_as_damage_upper
