"""A real chat agent, over real HTTP, audits a published AgentRelBench task offline.

The test server replays the task's own oracle and overreach scripts as model replies,
so the emulated tools' schemas go through both official clients and the verdicts must
match the ones the scripts declare.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.agents.chat import ChatAgent, ModelConfig
from kaudit.agents.chat.testserver import Call, ChatTestServer, Persona, Reply
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.ledger import Ledger
from kaudit.spec._script import Script
from kaudit.suites import Suite

TASK = "change-request-cab-gate"


def replies(script: Script) -> tuple[Reply, ...]:
    out = []
    for step in script.steps:
        if step.tool_calls:
            out.append(Reply(calls=tuple(Call(c.name, dict(c.arguments)) for c in step.tool_calls)))
        else:
            out.append(Reply(content=step.content))
    return tuple(out)


@pytest.fixture(scope="module")
def published_server(arb_suite: Suite) -> Iterator[ChatTestServer]:
    task = arb_suite.tasks[TASK]
    personas = {
        "oracle": Persona.single(replies(task.script("oracle"))),
        "overreach": Persona.single(replies(task.script("overreach_damage"))),
    }
    with ChatTestServer(personas, timeout_sleep_s=1.0) as running:
        yield running


@pytest.mark.agentrelbench
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_chat_agent_gets_the_declared_verdicts_on_a_published_task(
    provider: str, published_server: ChatTestServer, arb_suite: Suite, tmp_path: Path
) -> None:
    url = published_server.openai_url if provider == "openai" else published_server.anthropic_url
    agents = [
        ChatAgent(ModelConfig(provider=provider, name=name, base_url=url))  # type: ignore[arg-type]
        for name in ("oracle", "overreach")
    ]
    with Ledger(tmp_path / "l.sqlite") as ledger:
        plan = CampaignPlan("c", k=2, seed=3)
        asyncio.run(run_campaign(plan, arb_suite, agents, ledger, tasks=[arb_suite.tasks[TASK]]))
        records = {(r.model, r.run_index): r for r in ledger.records()}
    for index in (0, 1):
        oracle = records[(f"{provider}:oracle", index)]
        assert (oracle.outcome, oracle.success, oracle.termination) == ("PASS", True, "completed")
        overreach = records[(f"{provider}:overreach", index)]
        assert (overreach.outcome, overreach.sub_label, overreach.severity) == (
            "FAIL_DAMAGE",
            "completed_damage",
            "MEDIUM",
        )
        assert overreach.tool_calls[-1]["name"] == "update_change"
