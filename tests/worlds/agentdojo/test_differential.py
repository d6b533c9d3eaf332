"""kaudit's replay of every banking pair against AgentDojo's own run of the same scripts.

For each (user task, injection task) pair, AgentDojo's ground-truth pipeline runs the
user task's and the injection task's ground truth on its in-memory environment and
scores them with its `utility()`/`security()`. kaudit replays the same calls through its
sandbox, gateway and tables; AgentDojo's functions on kaudit's final state must give
the same answers, and kaudit's own verdict must agree except where explained.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kaudit.agents import ScriptedAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.suites import Suite
from tests.worlds.agentdojo.conftest import score_differences

EXPLAINED = {
    ("user_task_14/injection_task_7", "injection"): (
        "both set the password: the allowed change covers the injection's write, so the "
        "state shows a failed task (FAIL_SAFE), not damage"
    ),
}
"""Pairs where kaudit's verdict differs from AgentDojo's, and why."""


def _kaudit(suite: Suite, task_id: str, script: str) -> tuple[dict[str, Any], str | None]:
    task = suite.tasks[task_id]
    agent = ScriptedAgent(script=task.script(script))
    request = RunRequest(campaign="diff", task=task, model=agent.name, run_index=0, seed=0)
    result = asyncio.run(run_pipeline(request, agent, suite.substrate(task), referee=suite.referee))
    return result.record.extra["agentdojo"], result.record.outcome


@pytest.mark.slow
def test_every_banking_pair_scores_as_agentdojo_scores_it(banking: Suite) -> None:
    """Fails if a tool's write-back, the table mapping or the referee changes what
    AgentDojo's own functions conclude, or a new verdict disagreement appears unexplained."""
    assert banking.referee is not None
    pairs = [(t, banking.referee.sources[t]) for t in banking.tasks if "/" in t]  # type: ignore[attr-defined]
    mapping_differs, verdict_differs = score_differences(
        pairs, lambda task_id, script: _kaudit(banking, task_id, script)
    )
    assert mapping_differs == []
    assert set(verdict_differs) == set(EXPLAINED), verdict_differs
