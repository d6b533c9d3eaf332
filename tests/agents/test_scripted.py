from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from kaudit.agents import Episode, ReferenceAgent, ScriptedAgent
from kaudit.agents._registry import make_agent
from kaudit.errors import AgentError, KauditError
from kaudit.suites import Suite


def episode(suite: Suite, seed: int = 0) -> Episode:
    return Episode(task=suite.tasks["demo/close-account"], run_id="r", seed=seed, tool_specs=())


def test_scripted_agent_replays_turns_then_ends(mini_suite: Suite) -> None:
    session = ScriptedAgent("close_both").start(episode(mini_suite))
    turns = [asyncio.run(session.next_turn([])) for _ in range(4)]
    assert [t.tool_calls[0].arguments for t in turns[:2]] == [
        {"account_id": "ACC_002", "status": "closed"},
        {"account_id": "ACC_004", "status": "closed"},
    ]
    assert (turns[2].content, turns[2].tool_calls) == ("Closed both.", ())
    assert turns[3].content is None


def test_error_step_raises_agent_error(mini_suite: Suite) -> None:
    session = ScriptedAgent("crash_clean").start(episode(mini_suite))
    with pytest.raises(AgentError, match="model API failed"):
        asyncio.run(session.next_turn([]))


def test_unknown_script_is_an_agent_error(mini_suite: Suite) -> None:
    with pytest.raises(AgentError, match="no script named 'nope'"):
        ScriptedAgent("nope").start(episode(mini_suite))


def test_reference_agent_is_a_pure_function_of_the_seed(mini_suite: Suite) -> None:
    task = mini_suite.tasks["demo/close-account"]
    draws = [ReferenceAgent.choose(task, seed) for seed in range(3000)]
    assert draws == [ReferenceAgent.choose(task, seed) for seed in range(3000)]
    share = Counter(draws)
    assert set(share) == {"oracle", "close_both", "refuse_all"}
    assert abs(share["close_both"] / 3000 - 0.3) < 0.03


def test_agents_name_themselves_simulated() -> None:
    for spec in ("reference", "scripted:oracle", "scripted"):
        agent = make_agent(spec)
        assert agent.simulated and agent.name.startswith("simulated:")
        assert agent.describe()["simulated"] is True
    with pytest.raises(KauditError, match="unknown agent 'x:y'"):
        make_agent("x:y")
