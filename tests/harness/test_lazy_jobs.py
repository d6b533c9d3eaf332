"""Jobs are generated lazily: a huge k costs nothing up front, and the executor never hoards."""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.agents import ReferenceAgent, ScriptedAgent
from kaudit.harness import CampaignPlan, RunJob, StoppingRule, run_campaign
from kaudit.harness._campaign import plan_jobs
from kaudit.harness._executor import LocalExecutor
from kaudit.harness._run import RunResult
from kaudit.ledger import Ledger
from kaudit.suites import Suite

HUGE = 10**9


def test_planning_a_billion_runs_is_a_generator_in_index_major_order(mini_suite: Suite) -> None:
    """A list of 10**9 RunJobs would need ~100 GB before the first run."""
    tasks = list(mini_suite.tasks.values())
    agents = [ReferenceAgent(), ScriptedAgent("close_both")]
    jobs = plan_jobs(CampaignPlan("c", k=HUGE), agents, tasks)
    assert inspect.isgenerator(jobs)
    first = [(j.model, j.run_index) for j in itertools.islice(jobs, 4)]
    assert first == [
        ("simulated:reference", 0),
        ("simulated:scripted:close_both", 0),
        ("simulated:reference", 1),
        ("simulated:scripted:close_both", 1),
    ]


@pytest.mark.timeout(120)
def test_a_billion_run_campaign_with_a_stopping_rule_ends_early(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """With eager planning this never ends; with a lazy plan the damaged cell stops it."""
    plan = CampaignPlan("c", k=HUGE, until=StoppingRule.parse("damage", HUGE))
    with Ledger(tmp_path / "l.sqlite") as ledger:
        result = asyncio.run(
            run_campaign(
                plan,
                mini_suite,
                [ScriptedAgent("close_both")],
                ledger,
                executor=LocalExecutor(4),
            )
        )
    assert 1 <= result.ran <= 4  # at most the runs already in flight when damage landed
    assert result.stopped == HUGE - result.ran
    assert result.planned == HUGE


def counted(jobs: list[RunJob], pulled: list[int]) -> Iterator[RunJob]:
    for job in jobs:
        pulled[0] += 1
        yield job


@pytest.mark.timeout(60)
def test_the_executor_pulls_jobs_only_as_slots_open() -> None:
    """Grouping jobs by model up front materialized the whole plan."""
    jobs = [RunJob("c", "m", "t", i, i) for i in range(200)]
    pulled, ahead = [0], [0]
    done = [0]

    async def run(job: RunJob) -> RunResult | None:
        ahead[0] = max(ahead[0], pulled[0] - done[0])
        await asyncio.sleep(0)
        done[0] += 1
        return None

    asyncio.run(LocalExecutor(3).execute(counted(jobs, pulled), run, lambda result: None))
    assert done[0] == 200
    assert ahead[0] <= 3 + 1  # the slots in flight and the one being started


@pytest.mark.timeout(60)
def test_a_model_at_its_cap_does_not_hold_back_other_models() -> None:
    """A dispatcher waiting on the capped model's slot would deadlock here."""
    jobs = [RunJob("c", model, "t", i, i) for i in range(6) for model in ("slow", "fast")]
    fast_done = asyncio.Event()
    finished: list[str] = []

    async def run(job: RunJob) -> RunResult | None:
        if job.model == "slow":
            await fast_done.wait()  # the capped model's runs wait for every fast run
        finished.append(job.model)
        if finished.count("fast") == 6:
            fast_done.set()
        return None

    async def main() -> None:
        await LocalExecutor(4, {"slow": 1}).execute(iter(jobs), run, lambda result: None)

    asyncio.run(main())
    assert finished[:6] == ["fast"] * 6 and finished.count("slow") == 6
