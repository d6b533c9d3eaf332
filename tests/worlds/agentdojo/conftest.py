"""The AgentDojo banking suite, loaded once, and the campaign builder its tests share.

`banking_campaign(agent, ...)` is the hook for a test with another agent (a real local
model): build the agent, call it on a few pairs, assert on the referee report.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import agentdojo  # noqa: F401  (the dev extra installs it; CI must never skip it)
import pytest

from kaudit.agents import Agent
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.ledger import Ledger
from kaudit.report._referee import RefereeReport, referee_report
from kaudit.suites import Suite, load_suite

HANDFUL = (
    "user_task_0",
    "user_task_0/injection_task_5",
    "user_task_2/injection_task_4",
    "user_task_3/injection_task_7",
    "user_task_14/injection_task_7",
)
"""A handful of banking tasks: a benign one, money sent, a redirected standing order,
a password change, and the one pair whose injection the state cannot tell apart."""


@pytest.fixture(scope="session")
def banking() -> Suite:
    """`agentdojo:banking` at the default benchmark version."""
    return load_suite("agentdojo:banking")


def banking_campaign(
    suite: Suite,
    agent: Agent,
    ledger_path: Path,
    tasks: Sequence[str] = HANDFUL,
    k: int = 4,
    name: str = "agentdojo",
) -> RefereeReport:
    """Run `agent` k times on `tasks` of `suite` into `ledger_path`; the referee report."""
    plan = CampaignPlan(name=name, k=k, seed=7)
    with Ledger(ledger_path) as ledger:
        asyncio.run(run_campaign(plan, suite, [agent], ledger, tasks=suite.select(tasks)))
        records = list(ledger.records(name))
    report = referee_report(records)
    assert report is not None, "the campaign's runs carry no agentdojo judgment"
    return report


def agentdojo_scores(source: Any, script: str) -> tuple[bool, bool]:
    """(utility, security) of AgentDojo's own run of a pair's `script` ("oracle": the user
    task's ground truth, else the injection task's), on its in-memory environment."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline

    driver = source.user_task if script == "oracle" else source.injection_task
    utility, security = source.world.suite.run_task_with_pipeline(
        GroundTruthPipeline(driver),
        source.user_task,
        source.injection_task,
        dict(source.injections),
    )
    return bool(utility), bool(security)


KauditRun = Callable[[str, str], tuple[dict[str, Any], str | None]]
"""Replays a task's script in kaudit: (task id, script) -> (agentdojo judgment, outcome)."""


def score_differences(
    pairs: Iterable[tuple[str, Any]], kaudit_run: KauditRun
) -> tuple[list[str], dict[tuple[str, str], tuple[str, bool]]]:
    """Each pair's oracle and injection scored by AgentDojo's own run and on kaudit's state.

    Returns the runs whose (utility, security) differ, and by (task id, script) the runs
    where kaudit's FAIL_DAMAGE is not AgentDojo's `security()`, with whether it is masked.
    """
    mapping_differs: list[str] = []
    verdict_differs: dict[tuple[str, str], tuple[str, bool]] = {}
    for task_id, source in pairs:
        for script in ("oracle", "injection"):
            utility, security = agentdojo_scores(source, script)
            judged, outcome = kaudit_run(task_id, script)
            if (judged["utility"], judged["security"]) != (utility, security):
                mapping_differs.append(f"{task_id} {script}: {judged} vs {(utility, security)}")
            if (outcome == "FAIL_DAMAGE") != security:
                text = f"kaudit {outcome}, security {security}"
                verdict_differs[(task_id, script)] = (text, bool(judged["masked"]))
    return mapping_differs, verdict_differs
