"""kaudit's replay of slack, travel and workspace pairs against AgentDojo's own run.

As for banking (`test_differential.py`), but on a few pairs per suite drawn with a
fixed seed, so CI stays within its time budget: each pair is built alone (not the
whole suite). The full sweep over every pair of the three suites is

    KAUDIT_AGENTDOJO_SWEEP=1 python -m pytest tests/worlds/agentdojo/test_differential_suites.py

AgentDojo's functions must give the same utility and security on kaudit's final state
as on its own, and kaudit's verdict must be FAIL_DAMAGE exactly when AgentDojo's
`security()` holds, except on a masked pair (its injection leaves no change the user
task may not make: a page read, a user invited then removed, or an answer in text).
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

import pytest

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.suites._agentdojo import DEFAULT_VERSION, agentdojo_suite, pair_sources
from kaudit.worlds.agentdojo import (
    AgentDojoReferee,
    PairSource,
    build_task,
    important_instructions,
    injectable,
)
from kaudit.worlds.agentdojo._tasks import system_prompt
from tests.worlds.agentdojo.conftest import score_differences

SAMPLED = 3
"""Pairs per suite in CI (a pair replays two scripts twice: about a second each)."""

SWEEP = os.environ.get("KAUDIT_AGENTDOJO_SWEEP") == "1"


def _pairs(name: str) -> list[tuple[str, PairSource]]:
    """The suite's pairs (all under the sweep, else `SAMPLED` drawn with seed 28)."""
    dojo = agentdojo_suite(name, DEFAULT_VERSION)
    attack = important_instructions(dojo)
    ids = [
        f"{user_id}/{injection_id}"
        for user_id, user_task in dojo.user_tasks.items()
        if injectable(attack, user_task)
        for injection_id in dojo.injection_tasks
    ]
    chosen = ids if SWEEP else random.Random(28).sample(ids, SAMPLED)
    sources = pair_sources(dojo, DEFAULT_VERSION, chosen)
    return [(task_id, sources[task_id]) for task_id in chosen]


def _kaudit(task_id: str, source: PairSource, script: str) -> tuple[dict[str, Any], str | None]:
    task = build_task(task_id, source, system_prompt())
    agent = ScriptedAgent(script=task.script(script))
    request = RunRequest(campaign="diff", task=task, model=agent.name, run_index=0, seed=0)
    referee = AgentDojoReferee({task_id: source})
    substrate = source.world.substrate()
    result = asyncio.run(run_pipeline(request, agent, substrate, referee=referee))
    return result.record.extra["agentdojo"], result.record.outcome


@pytest.mark.slow
# Loading workspace whole takes 34 s (listing its injectable pairs runs every user task's ground
# truth on its large environment): it runs under the sweep, not in CI's budget.
@pytest.mark.parametrize("name", ["slack", "travel", *(["workspace"] if SWEEP else [])])
def test_sampled_pairs_score_as_agentdojo_scores_them(name: str) -> None:
    """Fails if a nested-list table, a read log or a field a validator rebuilds (an
    inbox's sent emails) changes what AgentDojo's functions conclude on kaudit's state,
    or kaudit's verdict disagrees with `security()` outside a masked pair."""
    pairs = dict(_pairs(name))
    mapping_differs, verdict_differs = score_differences(
        pairs.items(), lambda task_id, script: _kaudit(task_id, pairs[task_id], script)
    )
    assert mapping_differs == []
    assert [key for key, (_, masked) in verdict_differs.items() if not masked] == []
